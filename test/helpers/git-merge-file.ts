import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What `git merge-file -p --diff3 -L ours -L base -L theirs` gave for one triple. */
export interface GitMergeOutcome {
  /** The exit status: the number of conflicts (capped at 127), or 255 for an error such as a binary file. */
  status: number;
  merged: Buffer;
}

// No user or system configuration: merge.conflictStyle and the like must not change git's answer.
export const gitEnvironment = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

/** Runs git on each triple in turn, all files in one temporary directory. */
export function gitMergeFile(triples: ReadonlyArray<{ base: Buffer; ours: Buffer; theirs: Buffer }>): GitMergeOutcome[] {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'merge-file-'));
  try {
    return triples.map((triple, index) => {
      const file = (name: string) => path.join(directory, `${index}-${name}`);
      fs.writeFileSync(file('ours'), triple.ours);
      fs.writeFileSync(file('base'), triple.base);
      fs.writeFileSync(file('theirs'), triple.theirs);
      const args = ['merge-file', '-p', '--diff3', '-L', 'ours', '-L', 'base', '-L', 'theirs', file('ours'), file('base'), file('theirs')];
      try {
        return { status: 0, merged: execFileSync('git', args, { cwd: directory, env: gitEnvironment, stdio: ['ignore', 'pipe', 'pipe'] }) };
      } catch (error) {
        const { status, stdout } = error as { status: number | null; stdout: Buffer };
        if (status === null) throw error;
        return { status, merged: stdout };
      }
    });
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}
