/** Undo actions, run newest first, exactly once, on success, failure or interrupt. */
export class Teardown {
  private readonly steps: { what: string; run: () => Promise<unknown> }[] = [];
  private running: Promise<void> | undefined;

  add(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of [...this.steps].reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`teardown: ${step.what} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}
