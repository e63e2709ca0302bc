import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './processes.ts';

/** One instruction of the Dockerfile: `RUN npm ci` is `{ keyword: 'RUN', text: 'npm ci' }`. */
export interface Instruction {
  readonly keyword: string;
  readonly text: string;
}

export interface Stage {
  readonly from: string;
  readonly name: string;
  readonly instructions: readonly Instruction[];
}

/** The Dockerfile's stages, their instructions with continuation lines joined and comments left out. */
export function stagesOf(dockerfile: string): Stage[] {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  const stages: { from: string; name: string; instructions: Instruction[] }[] = [];
  for (const line of lines) {
    const [, keyword = '', text = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const [, image = '', name = ''] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(text) ?? [];
      stages.push({ from: image, name, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), text });
    }
  }
  return stages;
}

/** The repository's Dockerfile, parsed. */
export function readDockerfile(): Stage[] {
  return stagesOf(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'));
}

/** What the image's last stage runs with: its environment (ENV) and its user and group ids (USER). */
export function imageRuntime(stages: readonly Stage[] = readDockerfile()): { environment: Record<string, string>; uid: number; gid: number } {
  const instructions = stages.at(-1)?.instructions ?? [];
  const environment: Record<string, string> = {};
  for (const { text } of instructions.filter((i) => i.keyword === 'ENV')) {
    for (const [, name = '', value = ''] of text.matchAll(/(\w+)=(\S*)/g)) environment[name] = value;
  }
  const user = instructions.filter((i) => i.keyword === 'USER').at(-1)?.text ?? '0';
  const [uid = '0', gid = uid] = user.split(':');
  return { environment, uid: Number(uid), gid: Number(gid) };
}
