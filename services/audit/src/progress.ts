/**
 * A progress bar on standard error while it is a terminal; nothing otherwise, so piped output and logs
 * stay clean. Redrawn at most ten times a second.
 */
export interface Progress {
  update(done: number, total: number): void;
  finish(): void;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => {}, finish: () => {} };
  const started = performance.now();
  let drawnAt = 0;
  let drawn = false;
  const draw = (done: number, total: number): void => {
    const width = 30;
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(ratio * width);
    const rate = done / Math.max(0.001, (performance.now() - started) / 1000);
    stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${Math.round(rate)}/s `);
    drawn = true;
  };
  return {
    update(done, total) {
      const now = performance.now();
      if (now - drawnAt < 100 && done < total) return;
      drawnAt = now;
      draw(done, total);
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
