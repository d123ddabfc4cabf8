import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gitEnvironment } from './git-merge-file.js';

/**
 * What `git apply --unidiff-zero` makes of each file given the `@@` hunks
 * (context 0, bytes as they go in the patch), all files in one temporary
 * directory outside any repository and one run of git.
 */
export function gitApplyUnidiffZero(files: ReadonlyArray<{ current: Buffer; hunks: Buffer }>): Buffer[] {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'apply-'));
  try {
    const patch = files.flatMap((file, index) => {
      fs.writeFileSync(path.join(directory, `${index}.txt`), file.current);
      // git takes a header with no hunk after it for garbage: a file with nothing to apply is left out.
      return file.hunks.length === 0 ? [] : [Buffer.from(`diff --git a/${index}.txt b/${index}.txt\n--- a/${index}.txt\n+++ b/${index}.txt\n`), file.hunks];
    });
    fs.writeFileSync(path.join(directory, 'all.patch'), Buffer.concat(patch));
    // The directory's parent as a ceiling: git must not find a repository above the temporary directory.
    const environment = { ...gitEnvironment, GIT_CEILING_DIRECTORIES: path.dirname(directory) };
    execFileSync('git', ['apply', '--unidiff-zero', '--whitespace=nowarn', 'all.patch'], { cwd: directory, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    return files.map((_, index) => fs.readFileSync(path.join(directory, `${index}.txt`)));
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}
