import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, RewindableError } from '../../src/index.js';
import { bundledWorker } from './helpers/bundle.js';
import { errnoError, instrumentFs } from './helpers/fs-instrument.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * Races. A second process swaps a tracked file (and a tracked file the agent
 * created) and their parent directory between a regular file, a symlink to a
 * canary outside the project, a directory and nothing, in a tight loop, while
 * this process rewinds over and over (some rounds revert the turn or merge,
 * writing what they computed from the file as they read it). The canaries — a file outside the
 * project and a directory of canaries that a swapped-in link points to — must
 * never be written, truncated, chmodded, linked, deleted or added to. Another
 * process renames hard links of a canary over a tracked file that a rewind
 * only has to chmod, between the rewind's check and its chmod.
 */

const rounds = 1_200;
/** Mode-only rewinds of a 2 MB file raced by hard links of an outside canary. */
const linkRounds = 300;
const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

/** Everything about a file that a write, truncate, chmod, link or delete would change. */
function fingerprint(file: string): string {
  const stat = fs.lstatSync(file, { bigint: true });
  return JSON.stringify({
    bytes: fs.readFileSync(file).toString('base64'),
    mode: stat.mode.toString(8),
    mtime: stat.mtimeNs.toString(),
    ctime: stat.ctimeNs.toString(),
    inode: stat.ino.toString(),
    links: stat.nlink.toString(),
  });
}

/** Ten lines of top.txt; `edits` replaces some of them (a tool's line and someone else's merge cleanly). */
function topText(edits: Record<number, string> = {}): string {
  return Array.from({ length: 10 }, (_, index) => `${edits[index + 1] ?? (index === 0 ? 'top original' : `top line ${index + 1}`)}\n`).join('');
}

function canaryState(outside: string): Record<string, string> {
  const state: Record<string, string> = { 'canary.txt': fingerprint(path.join(outside, 'canary.txt')) };
  for (const name of fs.readdirSync(path.join(outside, 'canaries')).sort()) state[`canaries/${name}`] = fingerprint(path.join(outside, 'canaries', name));
  state['canaries/'] = JSON.stringify({ names: fs.readdirSync(path.join(outside, 'canaries')).sort(), mode: fs.lstatSync(path.join(outside, 'canaries')).mode.toString(8) });
  return state;
}

/**
 * A merging round's setup: the tools write top.txt (a tool's line 2) and
 * someone else edits its line 9 after them; the tools' last write of
 * dir/file.txt is recorded as whatever the swapper left there (a link, a
 * directory or nothing are recorded, or refused, as they are).
 */
async function toolsThenSomeoneElse(manager: CheckpointManager, root: string, round: number): Promise<void> {
  await manager.trackEdit('top.txt');
  fs.writeFileSync(path.join(root, 'top.txt'), topText({ 2: `agent ${round}` }));
  await manager.recordWrite('top.txt');
  await manager.recordWrite('dir/file.txt').catch((error: unknown) => {
    if (!RewindableError.isInstance(error)) throw error;
  });
  fs.writeFileSync(path.join(root, 'top.txt'), topText({ 2: `agent ${round}`, 9: `someone else ${round}` }));
}

describe('races: a second process swaps files and directories while rewinds run', () => {
  it(`never writes, truncates, chmods or deletes a canary outside the project (${rounds} rewind rounds)`, async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const { root, outside } = sandbox;
    fs.writeFileSync(path.join(outside, 'canary.txt'), 'canary: must never change\n', { mode: 0o640 });
    fs.mkdirSync(path.join(outside, 'canaries'));
    for (const name of ['file.txt', 'created.txt', 'other.txt']) fs.writeFileSync(path.join(outside, 'canaries', name), `canary ${name}\n`, { mode: 0o640 });
    // Old timestamps, so a change of mtime cannot hide inside the clock's granularity.
    for (const file of ['canary.txt', 'canaries/file.txt', 'canaries/created.txt', 'canaries/other.txt']) {
      fs.utimesSync(path.join(outside, file), new Date('2020-01-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z'));
    }
    fs.mkdirSync(path.join(root, 'dir'));
    fs.writeFileSync(path.join(root, 'dir', 'file.txt'), 'original\n', { mode: 0o644 });
    fs.writeFileSync(path.join(root, 'top.txt'), topText());
    const before = canaryState(outside);

    const manager = await CheckpointManager.open({ cwd: root, storeDir: sandbox.store, durability: 'none' });
    const first = await manager.checkpoint();
    for (const file of ['dir/file.txt', 'dir/created.txt', 'top.txt']) await manager.trackEdit(file);
    fs.writeFileSync(path.join(root, 'dir', 'file.txt'), 'edited by the agent\n');
    fs.writeFileSync(path.join(root, 'dir', 'created.txt'), 'created by the agent\n');
    fs.writeFileSync(path.join(root, 'top.txt'), topText({ 2: 'top edited' }));

    const seed = Date.now() % 1_000_000;
    const stopFile = path.join(sandbox.base, 'stop');
    const swapper = spawn(process.execPath, [await bundledWorker('swapper'), JSON.stringify({ root, outside, stopFile, seed })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let swapperOutput = '';
    swapper.stdout.on('data', (chunk: Buffer) => (swapperOutput += chunk.toString()));
    const swapperDone = new Promise<void>((resolve) => swapper.on('close', () => resolve()));

    const outcomes: Record<string, number> = {};
    const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);
    try {
      for (let round = 0; round < rounds; round += 1) {
        if (round % 4 === 0) fs.writeFileSync(path.join(root, 'top.txt'), topText({ 9: `round ${round}` }));
        // Every third round merges: the tools write top.txt and someone else edits another line of it after
        // them, and the tools' last write of dir/file.txt is whatever the swapper left there, so a merge of it
        // reads the file and (conflicting, with markers) writes what it computed, while the swapper runs.
        const merging = round % 3 === 1;
        try {
          if (merging) await toolsThenSomeoneElse(manager, root, round);
          // Every fifth round a selective rewind (the directory the swapper moves, and a file beside it), as exposed as a full one.
          const paths = round % 5 === 2 ? { paths: ['dir', 'top.txt'] } : {};
          const dryRun = round % 10 === 9;
          const result = !merging
            ? await manager.rewindFiles(first, { dryRun, ...paths })
            : round % 2 === 0
              ? await manager.revertTurn(first, { dryRun, onConflict: 'markers' })
              : await manager.rewindFiles(first, { dryRun, onConflict: round % 4 === 1 ? 'merge' : 'markers' });
          count(result.canRewind ? 'rewound' : `refused: ${result.errorCode}`);
          for (const skipped of result.skipped ?? []) count(`skipped ${skipped.reason}`);
          for (const file of result.files ?? []) if (!dryRun && file.merge !== undefined) count(`merged ${path.basename(file.path)} (${file.merge.status})`);
        } catch (error) {
          expect(RewindableError.isInstance(error), `round ${round} (swapper seed ${seed}): ${String(error)}`).toBe(true);
          count(`failed: ${(error as RewindableError).code}`);
        }
        if (round % 200 === 199) expect(canaryState(outside), `after round ${round} (swapper seed ${seed})`).toEqual(before);
      }
    } finally {
      fs.writeFileSync(stopFile, '');
      await swapperDone;
    }

    expect(canaryState(outside), `swapper seed ${seed}`).toEqual(before);
    const swapped = JSON.parse(swapperOutput) as { iterations: number; errors: number };
    expect(swapped.iterations).toBeGreaterThan(rounds);
    // The rewinds met links and moved directories, and still did their work in between.
    expect(outcomes.rewound).toBeGreaterThan(rounds / 2);
    expect((outcomes['skipped symlink'] ?? 0) + (outcomes['skipped parent-changed'] ?? 0)).toBeGreaterThan(10);
    // The merging rounds wrote clean merges of top.txt, and merged the swapped file as they read it (top.txt never conflicts).
    expect(outcomes['merged top.txt (clean)'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(rounds / 10);
    const swappedMerges = (outcomes['merged file.txt (clean)'] ?? 0) + (outcomes['merged file.txt (conflict)'] ?? 0) + (outcomes['skipped merge-conflict'] ?? 0);
    expect(swappedMerges, JSON.stringify(outcomes)).toBeGreaterThan(10);

    // Once the layout is back, nothing was lost: the last rewind restores the checkpoint exactly.
    await manager.rewindFiles(first);
    expect(fs.readFileSync(path.join(root, 'dir', 'file.txt'), 'utf8')).toBe('original\n');
    expect(fs.statSync(path.join(root, 'dir', 'file.txt')).mode & 0o777).toBe(0o644);
    expect(fs.existsSync(path.join(root, 'dir', 'created.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'top.txt'), 'utf8')).toBe(topText());
    await manager.close();
    console.info(`races: ${rounds} rewind rounds against ${swapped.iterations} swaps (seed ${seed})`, outcomes);
  }, 180_000);

  it(`a mode-only rewind never chmods a hard link of an outside file renamed over the tracked file after its check (${linkRounds} rounds)`, async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const canary = path.join(sandbox.outside, 'canary.bin');
    fs.writeFileSync(canary, Buffer.alloc(4096, 'c'), { mode: 0o640 });
    const file = path.join(sandbox.root, 'dir', 'large.bin');
    fs.mkdirSync(path.dirname(file));
    // 2 MB, and its ctime changes every round: never vouched for by its signature, so each check reads it.
    const original = Buffer.alloc(2 * 1024 * 1024, 'x');
    fs.writeFileSync(file, original, { mode: 0o644 });
    const canaryBefore = () => ({ sha256: createHash('sha256').update(fs.readFileSync(canary)).digest('hex'), mode: (fs.lstatSync(canary).mode & 0o7777).toString(8) });
    const before = canaryBefore();

    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
    const first = await manager.checkpoint();
    await manager.trackEdit(file);
    fs.chmodSync(file, 0o600); // same bytes, other mode: every rewind has only a chmod to make

    const stopFile = path.join(sandbox.base, 'stop');
    const swapper = spawn(process.execPath, [await bundledWorker('link-swapper'), JSON.stringify({ file, canary, stopFile, mode: 0o600 })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let swapperOutput = '';
    const swapperStarted = new Promise<void>((resolve) =>
      swapper.stdout.on('data', (chunk: Buffer) => {
        swapperOutput += chunk.toString();
        if (swapperOutput.startsWith('started\n')) resolve();
      }),
    );
    const swapperDone = new Promise<void>((resolve) => swapper.on('close', () => resolve()));
    await swapperStarted;

    const outcomes: Record<string, number> = {};
    const count = (key: string) => (outcomes[key] = (outcomes[key] ?? 0) + 1);
    try {
      for (let round = 0; round < linkRounds; round += 1) {
        try {
          const result = await manager.rewindFiles(first);
          count(result.filesChanged!.length > 0 ? 'chmodded' : 'nothing changed');
          for (const skipped of result.skipped ?? []) count(`skipped ${skipped.reason}`);
        } catch (error) {
          expect(RewindableError.isInstance(error), `round ${round}: ${String(error)}`).toBe(true);
          count(`failed: ${(error as RewindableError).code}`);
        }
        if (round % 50 === 49) expect(canaryBefore(), `after round ${round}`).toEqual(before);
      }
    } finally {
      fs.writeFileSync(stopFile, '');
      await swapperDone;
    }

    expect(canaryBefore(), JSON.stringify(outcomes)).toEqual(before);
    const swapped = JSON.parse(swapperOutput.slice('started\n'.length)) as { swaps: number };
    expect(swapped.swaps).toBeGreaterThan(linkRounds);
    // The rewinds met the canary under the tracked name, and still did their work in between.
    expect(outcomes.chmodded, JSON.stringify(outcomes)).toBeGreaterThan(10);
    expect((outcomes['skipped hard-link'] ?? 0) + (outcomes['skipped changed-during-rewind'] ?? 0), JSON.stringify(outcomes)).toBeGreaterThan(0);

    // Once the swapper is gone, the rewind does what it should.
    await manager.rewindFiles(first);
    expect(fs.readFileSync(file).equals(original)).toBe(true);
    expect(fs.statSync(file).mode & 0o7777).toBe(0o644);
    await manager.close();
    console.info(`races: ${linkRounds} mode-only rewinds against ${swapped.swaps} hard-link swaps`, outcomes);
  }, 180_000);

  it('a file that cannot be opened to change its mode is never chmodded through a link swapped in after the check', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const canary = path.join(sandbox.outside, 'canary.txt');
    fs.writeFileSync(canary, 'canary\n', { mode: 0o600 });
    const script = path.join(sandbox.root, 'run.sh');
    fs.writeFileSync(script, 'echo run\n', { mode: 0o755 });
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
    const first = await manager.checkpoint();
    await manager.trackEdit('run.sh');
    fs.chmodSync(script, 0o600); // same bytes, other mode: the rewind has only a chmod to do
    const before = fingerprint(canary);

    // The open that would change the mode is refused, and another process swaps in a link to the canary
    // right after the file is checked again: the rewind fails (typed) or changes the mode of run.sh alone.
    let refused = false;
    const restore = instrumentFs(
      ['openSync', 'lstatSync'],
      (name, args) => {
        // Only the open that would change the mode (found by its caller, so the plan's reads go through).
        if (name === 'openSync' && !refused && String(args[0]).endsWith('/run.sh') && /changeMode/.test(new Error().stack ?? '')) {
          refused = true;
          return errnoError('EACCES', name);
        }
        return undefined;
      },
      (name, args) => {
        if (name === 'lstatSync' && refused && args.length === 1 && String(args[0]).endsWith('/run.sh')) {
          fs.rmSync(script);
          fs.symlinkSync(canary, script);
        }
      },
    );
    try {
      await manager.rewindFiles(first).catch((error: unknown) => expect(RewindableError.isInstance(error)).toBe(true));
    } finally {
      restore();
    }
    expect(refused).toBe(true);
    expect(fingerprint(canary)).toEqual(before);
    await manager.close();
  });
});
