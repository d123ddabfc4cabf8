import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The published package, checked as users get it: packed, linted, type-resolved, imported both ways. */
const repository = path.resolve(import.meta.dirname, '..');
let workDirectory: string;
let tarball: string;

beforeAll(() => {
  if (!fs.existsSync(path.join(repository, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  workDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-pack-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', workDirectory], { cwd: repository, encoding: 'utf8' })) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = path.join(workDirectory, packed[0]!.filename);
}, 120_000);

afterAll(() => fs.rmSync(workDirectory, { recursive: true, force: true }));

describe('package', () => {
  it('ships only dist, README and LICENSE', () => {
    const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
    for (const entry of listing) expect(entry).toMatch(/^package\/(dist\/|README\.md$|LICENSE$|package\.json$)/);
    expect(listing).toContain('package/dist/index.js');
    expect(listing).toContain('package/dist/index.cjs');
  });

  it('passes publint', () => {
    const output = execFileSync(path.join(repository, 'node_modules/.bin/publint'), ['run', tarball, '--strict', '--pack', 'false'], { encoding: 'utf8' });
    expect(output).not.toMatch(/error|warning/i);
  });

  it('passes are-the-types-wrong for every entry point', () => {
    execFileSync(path.join(repository, 'node_modules/.bin/attw'), [tarball, '--profile', 'node16', '--format', 'ascii'], { encoding: 'utf8' });
  });

  it('imports with ESM and requires with CommonJS from an installed copy', () => {
    const consumer = path.join(workDirectory, 'consumer');
    fs.mkdirSync(consumer);
    fs.writeFileSync(path.join(consumer, 'package.json'), '{"name":"consumer","private":true}');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: consumer, stdio: 'pipe' });
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e', "import { CheckpointManager, RewindableError } from 'rewindable'; console.log(typeof CheckpointManager, typeof RewindableError.isInstance)"], { cwd: consumer, encoding: 'utf8' });
    const cjs = execFileSync(process.execPath, ['-e', "const { CheckpointManager, RewindableErrorCode } = require('rewindable'); console.log(typeof CheckpointManager, RewindableErrorCode.NOT_ENABLED)"], { cwd: consumer, encoding: 'utf8' });
    expect(esm.trim()).toBe('function function');
    expect(cjs.trim()).toBe('function NOT_ENABLED');
  });
});
