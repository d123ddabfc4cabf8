import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { repository } from './consumer-project.js';

let clone: string | undefined;

afterAll(() => {
  if (clone !== undefined) fs.rmSync(path.dirname(clone), { recursive: true, force: true });
});

describe('npm pack', () => {
  it('from a fresh clone, which has no dist yet, builds it and ships it', () => {
    clone = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-clone-'))), 'rewindable');
    // The committed tree, as a user or CI checks it out; the installed dependencies are the repository's own.
    execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${repository}`, clone], { stdio: 'pipe' });
    fs.symlinkSync(path.join(repository, 'node_modules'), path.join(clone, 'node_modules'));
    expect(fs.existsSync(path.join(clone, 'dist'))).toBe(false);
    // The prepack build writes to stdout too: the tarball itself is listed.
    execFileSync('npm', ['pack', '--pack-destination', path.dirname(clone)], { cwd: clone, stdio: 'pipe' });
    const tarball = fs.readdirSync(path.dirname(clone)).find((name) => name.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const listing = execFileSync('tar', ['-tzf', path.join(path.dirname(clone), tarball!)], { encoding: 'utf8' }).trim().split('\n').map((entry) => entry.replace(/^package\//, ''));
    for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/cli.js', 'dist/storage/postgres.js']) expect(listing).toContain(file);
  }, 240_000);
});
