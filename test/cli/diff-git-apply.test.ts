import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, snapshotTree, tempProject, type TempProject } from '../helpers/temp-project.js';
import { buildCli, runCli, type BuiltCli } from './helpers/built-cli.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const definitions = Array.from({ length: 12 }, (_, index) => `function step${index}() {\n  return ${index};\n}\n`).join('');

interface Scenario {
  project: TempProject;
  checkpoint: string;
  /** A copy of the project as it was at the checkpoint: what a rewind, or the diff applied, must give. */
  atCheckpoint: string;
}

/**
 * A session whose one turn does every kind of change git has a header for:
 * text edited in two places, a last line losing its newline, files created
 * (text, empty, binary), files deleted (text, binary), a binary file changed
 * and a mode change.
 */
async function mixedSession(): Promise<Scenario> {
  const project = tempProject();
  project.write('src/steps.js', definitions);
  project.write('tail.txt', 'first\nlast\n');
  project.write('gone.txt', 'was here\n');
  project.write('run.sh', 'echo run\n', 0o755);
  project.write('image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03]));
  project.write('old.bin', Buffer.from([0x00, 0xff, 0x10]));
  const atCheckpoint = path.join(project.outside, 'at-checkpoint');
  fs.cpSync(project.root, atCheckpoint, { recursive: true });
  const manager = await project.open();
  const checkpoint = await manager.checkpoint(newId());
  for (const file of ['src/steps.js', 'tail.txt', 'gone.txt', 'run.sh', 'image.bin', 'old.bin', 'created.txt', 'empty.txt', 'new.bin']) await manager.trackEdit(file);
  project.write('src/steps.js', definitions.replace('return 1;', 'return 100;').replace('return 10;', 'return -10;\n  // changed'));
  project.write('tail.txt', 'first\nlast, no newline');
  fs.rmSync(project.file('gone.txt'));
  fs.chmodSync(project.file('run.sh'), 0o644);
  project.write('image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x09, 0x08]));
  fs.rmSync(project.file('old.bin'));
  project.write('created.txt', 'made by the agent\n');
  project.write('empty.txt', '');
  project.write('new.bin', Buffer.from([0x00, 0x00, 0x07]));
  await manager.close();
  return { project, checkpoint, atCheckpoint };
}

function git(cwd: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('git', ['-c', 'core.abbrev=7', '-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** What git itself prints from the tree `from` to the tree `to` (renames off: the rewind has none). */
function gitDiff(base: string, from: string, to: string, extra: string[] = []): string {
  const repository = path.join(base, `repository-${newId()}`);
  fs.cpSync(from, repository, { recursive: true });
  git(repository, ['init', '-q']);
  git(repository, ['add', '-A']);
  git(repository, ['commit', '-q', '-m', 'now']);
  for (const entry of fs.readdirSync(repository)) if (entry !== '.git') fs.rmSync(path.join(repository, entry), { recursive: true });
  fs.cpSync(to, repository, { recursive: true });
  git(repository, ['add', '-A']);
  return git(repository, ['diff', '--cached', '--no-renames', ...extra]).stdout;
}

/** The patches of the CLI's output, without its closing summary. */
function patchesOf(stdout: string): string {
  return stdout.replace(/\n\d+ files? would change, .*\n$/, '');
}

/** A copy of the project now, to apply a patch to. */
function copyOfNow(scenario: Scenario): string {
  const copy = path.join(scenario.project.outside, `now-${newId()}`);
  fs.cpSync(scenario.project.root, copy, { recursive: true });
  return copy;
}

describe('rewindable diff output is a patch git applies whole', () => {
  it('prints, without --binary, exactly what git diff prints for the same two trees', async () => {
    const scenario = await mixedSession();

    const run = await runCli(cli, ['diff', scenario.checkpoint, '--store', scenario.project.store], { cwd: scenario.project.root });

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(patchesOf(run.stdout)).toBe(gitDiff(scenario.project.outside, scenario.project.root, scenario.atCheckpoint));
    expect(run.stdout).toContain('@@ -29,8 +29,7 @@ function step9() {\n');
    expect(run.stdout).toContain('Binary files a/image.bin and b/image.bin differ\n');
    expect(run.stdout).toContain('\\ No newline at end of file\n');
  });

  it('with --binary, prints the GIT binary patches git diff --binary prints', async () => {
    const scenario = await mixedSession();

    const run = await runCli(cli, ['diff', scenario.checkpoint, '--binary', '--store', scenario.project.store], { cwd: scenario.project.root });

    expect(run.code).toBe(0);
    expect(patchesOf(run.stdout)).toBe(gitDiff(scenario.project.outside, scenario.project.root, scenario.atCheckpoint, ['--binary']));
    expect(run.stdout).toContain('GIT binary patch\nliteral 8\n');
  });

  it('with --binary, git apply turns the files now into the files at the checkpoint, byte for byte and mode for mode', async () => {
    const scenario = await mixedSession();
    const run = await runCli(cli, ['diff', scenario.checkpoint, '--binary', '--store', scenario.project.store], { cwd: scenario.project.root });
    const copy = copyOfNow(scenario);
    const patch = path.join(scenario.project.outside, 'rewind.patch');
    fs.writeFileSync(patch, run.stdout);

    const check = git(copy, ['apply', '--check', patch]);
    const applied = git(copy, ['apply', patch]);

    expect([check.status, check.stderr]).toEqual([0, '']);
    expect([applied.status, applied.stderr]).toEqual([0, '']);
    expect(snapshotTree(copy)).toEqual(snapshotTree(scenario.atCheckpoint));
  });

  it('without --binary, git apply refuses the binary changes exactly as it refuses git diff output without --binary', async () => {
    const scenario = await mixedSession();
    const run = await runCli(cli, ['diff', scenario.checkpoint, '--store', scenario.project.store], { cwd: scenario.project.root });
    const ours = path.join(scenario.project.outside, 'ours.patch');
    const theirs = path.join(scenario.project.outside, 'theirs.patch');
    fs.writeFileSync(ours, run.stdout);
    fs.writeFileSync(theirs, gitDiff(scenario.project.outside, scenario.project.root, scenario.atCheckpoint));
    const copy = copyOfNow(scenario);
    const before = snapshotTree(copy);

    const withOurs = git(copy, ['apply', '--check', ours]);
    const withTheirs = git(copy, ['apply', '--check', theirs]);

    expect(withOurs.status).not.toBe(0);
    expect(withOurs.stderr).toContain('without full index line');
    expect([withOurs.status, withOurs.stderr.replaceAll(ours, 'PATCH')]).toEqual([withTheirs.status, withTheirs.stderr.replaceAll(theirs, 'PATCH')]);
    expect(git(copy, ['apply', ours]).status).not.toBe(0);
    expect(snapshotTree(copy)).toEqual(before);
  });

  it('quotes names as git does (a tab, a line break, a quote, non-ASCII) and ends the --- and +++ lines of a name with a space with a tab', async () => {
    const project = tempProject();
    const names = ['x y.txt', 't\tab.txt', 'q"uote.txt', 'ünï.txt', 'sp ü.txt'];
    for (const name of names) project.write(name, `${name} before\n`);
    const atCheckpoint = path.join(project.outside, 'at-checkpoint');
    fs.cpSync(project.root, atCheckpoint, { recursive: true });
    const manager = await project.open();
    const checkpoint = await manager.checkpoint(newId());
    for (const name of [...names, 'new\nline.txt', 'new file.txt']) await manager.trackEdit(name);
    for (const name of names.slice(0, 3)) project.write(name, `${name} after\n`);
    fs.rmSync(project.file('ünï.txt'));
    project.write('new\nline.txt', 'created\n');
    project.write('new file.txt', 'created\n');
    await manager.close();

    const run = await runCli(cli, ['diff', checkpoint, '--store', project.store], { cwd: project.root });

    expect(run.code).toBe(0);
    expect(patchesOf(run.stdout)).toBe(gitDiff(project.outside, project.root, atCheckpoint));
    expect(run.stdout).toContain('diff --git "a/t\\tab.txt" "b/t\\tab.txt"\n');
    expect(run.stdout).toContain('--- a/x y.txt\t\n');
    const copy = path.join(project.outside, 'now');
    fs.cpSync(project.root, copy, { recursive: true });
    const patch = path.join(project.outside, 'rewind.patch');
    fs.writeFileSync(patch, run.stdout);
    expect(git(copy, ['apply', patch])).toMatchObject({ status: 0, stderr: '' });
    expect(snapshotTree(copy)).toEqual(snapshotTree(atCheckpoint));
  });

  it('lists a file it makes no patch for as a comment git apply skips, and carries text that is not UTF-8 as binary, so the rest applies', async () => {
    const project = tempProject();
    const big = 'a line of a large generated file\n'.repeat(40_000); // 1.3 MB: over the 1 MiB a patch is made for
    project.write('big.txt', big);
    project.write('small.txt', 'small before\n');
    project.write('latin1.txt', Buffer.from('caf\xe9\n', 'latin1'));
    const atCheckpoint = path.join(project.outside, 'at-checkpoint');
    fs.cpSync(project.root, atCheckpoint, { recursive: true });
    const manager = await project.open();
    const checkpoint = await manager.checkpoint(newId());
    for (const name of ['big.txt', 'small.txt', 'latin1.txt']) await manager.trackEdit(name);
    project.write('big.txt', big.replace('a line', 'one line'));
    project.write('small.txt', 'small after\n');
    project.write('latin1.txt', Buffer.from('caf\xe8\n', 'latin1'));
    await manager.close();

    const run = await runCli(cli, ['diff', checkpoint, '--binary', '--store', project.store], { cwd: project.root });

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^# no patch for big\.txt: /m);
    expect(run.stdout).not.toContain('diff --git a/big.txt');
    const copy = path.join(project.outside, 'now');
    fs.cpSync(project.root, copy, { recursive: true });
    const patch = path.join(project.outside, 'rewind.patch');
    fs.writeFileSync(patch, run.stdout);
    expect(git(copy, ['apply', patch])).toMatchObject({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(copy, 'small.txt'), 'utf8')).toBe('small before\n');
    expect(fs.readFileSync(path.join(copy, 'latin1.txt'))).toEqual(Buffer.from('caf\xe9\n', 'latin1'));
    expect(fs.readFileSync(path.join(copy, 'big.txt'), 'utf8')).toBe(big.replace('a line', 'one line')); // left as it is, as the comment says
  });
});

