import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { treeBytes } from './workspace.js';

/**
 * A shadow git repository, as Cline, Roo Code and Gemini CLI keep one: the
 * repository (`GIT_DIR`) lives outside the project, the project is its work
 * tree, and every checkpoint is `git add -A` then `git commit`. Each call is a
 * child process, as those tools run git.
 *
 * Settings are git's defaults (no fsync of loose objects, the work tree is
 * never fsynced) except: no user or system configuration is read, and
 * automatic garbage collection is off, so that no background repack runs
 * during the measurements of this or any other contender. Sizes are reported
 * both as left by the commits (loose objects) and after an explicit `git gc`.
 */
export class ShadowGit {
  private constructor(
    readonly gitDirectory: string,
    readonly workTree: string,
  ) {}

  static init(gitDirectory: string, workTree: string): ShadowGit {
    fs.mkdirSync(gitDirectory, { recursive: true });
    const repository = new ShadowGit(gitDirectory, workTree);
    repository.run(['init', '-q']);
    for (const [key, value] of [
      ['user.name', 'Shadow Checkpoint'],
      ['user.email', 'checkpoint@example.invalid'],
      ['commit.gpgsign', 'false'],
      ['core.autocrlf', 'false'],
      ['gc.auto', '0'],
      ['maintenance.auto', 'false'],
    ] as const) {
      repository.run(['config', key, value]);
    }
    return repository;
  }

  private get environment(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      GIT_DIR: this.gitDirectory,
      GIT_WORK_TREE: this.workTree,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
    };
  }

  /** Runs git in the work tree; throws with git's message when it fails. */
  run(args: readonly string[]): string {
    const result = spawnSync('git', args, { cwd: this.workTree, env: this.environment, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    if (result.error !== undefined) throw result.error;
    if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed (${result.status}): ${result.stderr.trim()}`);
    return result.stdout;
  }

  /** One shadow checkpoint: `git add -A` then `git commit`; returns the new commit's id. */
  checkpoint(message: string): string {
    this.run(['add', '-A']);
    this.run(['commit', '-q', '--allow-empty', '--no-verify', '-m', message]);
    return this.head();
  }

  head(): string {
    return this.run(['rev-parse', 'HEAD']).trim();
  }

  /** Bytes of the repository: all of `.git`, and its loose objects alone. */
  size(): { gitBytes: number; gitDiskBytes: number; looseObjectBytes: number; looseObjects: number } {
    const whole = treeBytes(this.gitDirectory);
    let looseObjectBytes = 0;
    let looseObjects = 0;
    const objects = path.join(this.gitDirectory, 'objects');
    for (const folder of fs.readdirSync(objects)) {
      if (!/^[0-9a-f]{2}$/.test(folder)) continue;
      const counted = treeBytes(path.join(objects, folder));
      looseObjectBytes += counted.bytes;
      looseObjects += counted.files;
    }
    return { gitBytes: whole.bytes, gitDiskBytes: whole.diskBytes, looseObjectBytes, looseObjects };
  }
}
