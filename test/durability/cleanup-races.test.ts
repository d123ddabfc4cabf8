import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, type CleanupResult } from '../../src/index.js';
import type { CallName } from './helpers/fs-instrument.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';
import { startTalkingChild } from './helpers/talking-child.js';

/**
 * Retention never removes what a live session may still need. A clean-up in
 * another process is stopped at one exact filesystem call (see
 * workers/paused-cleanup.ts) while this process uses the store, with real
 * files and real processes: what the clean-up read a moment earlier is then
 * out of date, and it must notice.
 */

const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

const fortyDaysAgo = () => new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);

function newSandbox(): Sandbox {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  return sandbox;
}

const open = (sandbox: Sandbox, options: { resume?: string } = {}) => CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', ...options });

/** Every file of a session (its log and pack, wherever the layout keeps them) made to look last written 40 days ago. */
function age(sandbox: Sandbox, sessionId: string): void {
  const files = fs.readdirSync(sandbox.store, { recursive: true, encoding: 'utf8' }).filter((file) => file.includes(sessionId));
  for (const file of files) fs.utimesSync(path.join(sandbox.store, file), fortyDaysAgo(), fortyDaysAgo());
}

/**
 * Starts `cleanup()` (or, with `collectGarbageOnly`, only the store's
 * `collectGarbage`) in another process and waits until it stops just before
 * the first call matching `pause`.
 */
async function pausedCleanup(sandbox: Sandbox, pause: { calls: CallName[]; path?: string; pathPrefix?: string }, options: { collectGarbageOnly?: boolean } = {}) {
  const resumeFile = path.join(sandbox.base, 'resume-cleanup');
  const worker = await startTalkingChild('paused-cleanup', { store: sandbox.store, pause, resumeFile, ...options });
  const paused = await worker.next();
  expect(paused).toHaveProperty('paused');
  return {
    async finish(): Promise<CleanupResult> {
      fs.writeFileSync(resumeFile, '');
      const outcome = await worker.next();
      expect(outcome).toHaveProperty('result');
      return outcome.result as CleanupResult;
    },
  };
}

describe('a large backup reused by a live session survives a concurrent clean-up', () => {
  /**
   * An idle session backed up big.bin 40 days ago (a package-lock.json that
   * never changed); a live session tracks the same bytes, so its backup is
   * that same loose blob, which is not written again.
   */
  async function reusedLargeBackup() {
    const sandbox = newSandbox();
    const original = randomBytes(1536 * 1024);
    fs.writeFileSync(path.join(sandbox.root, 'big.bin'), original);
    const idle = await open(sandbox);
    await idle.checkpoint();
    await idle.trackEdit('big.bin');
    await idle.close();
    const hash = createHash('sha256').update(original).digest('hex');
    const blob = path.join(sandbox.store, 'blobs', hash.slice(0, 2), hash);
    age(sandbox, idle.sessionId);
    fs.utimesSync(blob, fortyDaysAgo(), fortyDaysAgo());
    const live = await open(sandbox);
    const turn = await live.checkpoint();
    return { sandbox, original, idle, blob, live, turn };
  }

  async function trackAndRewind(setup: Awaited<ReturnType<typeof reusedLargeBackup>>, cleanup: Awaited<ReturnType<typeof pausedCleanup>>) {
    const { sandbox, original, idle, live, turn } = setup;
    await live.trackEdit('big.bin');
    fs.writeFileSync(path.join(sandbox.root, 'big.bin'), 'the agent rewrote it\n');
    const result = await cleanup.finish();
    expect(result.sessionsRemoved.map((session) => session.sessionId)).toEqual([idle.sessionId]);
    const rewind = await live.rewindFiles(turn);
    await live.close();
    expect(rewind.skipped ?? []).toEqual([]);
    expect(fs.readFileSync(path.join(sandbox.root, 'big.bin')).equals(original)).toBe(true);
  }

  it('reused after the clean-up read the logs: the reuse makes the blob as fresh as a new one, and the rewind restores its exact bytes', async () => {
    const setup = await reusedLargeBackup();
    const cleanup = await pausedCleanup(setup.sandbox, { calls: ['readdirSync'], path: path.join(setup.sandbox.store, 'blobs') });
    await trackAndRewind(setup, cleanup);
  });

  it('reused between the clean-up’s age check and its removal: the blob is checked again and kept, and the rewind restores its exact bytes', async () => {
    const setup = await reusedLargeBackup();
    const cleanup = await pausedCleanup(setup.sandbox, { calls: ['rmSync', 'unlinkSync', 'renameSync'], path: setup.blob });
    await trackAndRewind(setup, cleanup);
    expect(fs.readFileSync(setup.blob).equals(setup.original)).toBe(true);
  });
});

describe('an idle session used after the clean-up listed it survives', () => {
  it('resumed and rewound between the clean-up’s listing and its lock: the session and its undo checkpoint are kept', async () => {
    const sandbox = newSandbox();
    fs.writeFileSync(path.join(sandbox.root, 'a.txt'), 'as the user wrote it\n');
    const agent = await open(sandbox);
    const turn = await agent.checkpoint();
    await agent.trackEdit('a.txt');
    fs.writeFileSync(path.join(sandbox.root, 'a.txt'), 'the agent’s version, in no other file\n');
    await agent.close();
    age(sandbox, agent.sessionId);
    const lockPath = path.join(path.dirname(sandbox.logPath(agent.sessionId)), `${agent.sessionId}.lock`);
    const cleanup = await pausedCleanup(sandbox, { calls: ['openSync'], pathPrefix: `${lockPath}.` });

    const user = await open(sandbox, { resume: agent.sessionId });
    const { undoCheckpointId } = await user.rewindFiles(turn);
    await user.close();
    expect(fs.readFileSync(path.join(sandbox.root, 'a.txt'), 'utf8')).toBe('as the user wrote it\n');
    const result = await cleanup.finish();

    expect(result).toMatchObject({ sessionsRemoved: [], sessionsKept: 1 });
    const reopened = await open(sandbox, { resume: agent.sessionId });
    expect((await reopened.listCheckpoints()).map((checkpoint) => checkpoint.id)).toContain(undoCheckpointId);
    await reopened.rewindFiles(undoCheckpointId!);
    await reopened.close();
    expect(fs.readFileSync(path.join(sandbox.root, 'a.txt'), 'utf8')).toBe('the agent’s version, in no other file\n');
  });
});

describe('a session that moves while a clean-up reads the store keeps its backups', () => {
  const twoHoursAgo = () => new Date(Date.now() - 2 * 60 * 60 * 1000);

  /**
   * A closed session that backed up `files` and then changed them; the
   * clean-up is then stopped as it lists the project's folder, and the
   * project moves and is resumed from its new directory meanwhile (which
   * moves the session to the new directory's key, a key the clean-up has not
   * listed). Returns what the rewind from the new directory must restore.
   */
  async function movedDuringCleanup(files: Record<string, Buffer>, prepare: (sandbox: Sandbox, sessionId: string) => void, options: { collectGarbageOnly?: boolean } = {}) {
    const sandbox = newSandbox();
    for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(sandbox.root, name), bytes);
    const agent = await open(sandbox);
    const turn = await agent.checkpoint();
    for (const name of Object.keys(files)) {
      await agent.trackEdit(name);
      fs.writeFileSync(path.join(sandbox.root, name), 'the agent rewrote it\n');
    }
    await agent.close();
    prepare(sandbox, agent.sessionId);
    const cleanup = await pausedCleanup(sandbox, { calls: ['readdirSync'], path: path.dirname(sandbox.logPath(agent.sessionId)) }, options);

    const movedRoot = path.join(sandbox.base, 'moved-project');
    fs.renameSync(sandbox.root, movedRoot);
    const resumed = await CheckpointManager.open({ cwd: movedRoot, storeDir: sandbox.store, durability: 'none', resume: agent.sessionId });
    await resumed.close();
    const result = await cleanup.finish();

    const again = await CheckpointManager.open({ cwd: movedRoot, storeDir: sandbox.store, durability: 'none', resume: agent.sessionId });
    const rewind = await again.rewindFiles(turn);
    await again.close();
    return { result, rewind, read: (name: string) => fs.readFileSync(path.join(movedRoot, name)) };
  }

  it('moved and resumed while cleanup() lists the projects: its large backup, older than the grace period, is kept, and the rewind from its new directory restores its exact bytes', async () => {
    const original = randomBytes(1536 * 1024);
    const hash = createHash('sha256').update(original).digest('hex');

    const { result, rewind, read } = await movedDuringCleanup({ 'big.bin': original }, (sandbox) => {
      // Written two hours ago, past the hour of grace: only a log naming it keeps it.
      const blob = path.join(sandbox.store, 'blobs', hash.slice(0, 2), hash);
      fs.utimesSync(blob, twoHoursAgo(), twoHoursAgo());
    });

    expect(result).toMatchObject({ sessionsRemoved: [], blobsRemoved: 0 });
    expect(rewind.skipped ?? []).toEqual([]);
    expect(read('big.bin').equals(original)).toBe(true);
  });

  it('of the older layout, moved and resumed while collectGarbage lists the sessions: its pack named by session alone is kept, and the rewind restores every file', async () => {
    const originals = { 'a.txt': Buffer.from('a, as the user wrote it\n'), 'b.txt': Buffer.from('b, as the user wrote it\n') };

    const { result, rewind, read } = await movedDuringCleanup(
      originals,
      (sandbox, sessionId) => {
        const packs = path.join(sandbox.store, 'blobs', 'packs');
        const legacyPack = path.join(packs, `${sessionId}.pack`);
        fs.renameSync(path.join(packs, encodeProjectKey(sandbox.root), `${sessionId}.pack`), legacyPack);
        fs.utimesSync(legacyPack, fortyDaysAgo(), fortyDaysAgo());
      },
      { collectGarbageOnly: true },
    );

    expect(result).toMatchObject({ blobsRemoved: 0 });
    expect(rewind.skipped ?? []).toEqual([]);
    for (const [name, bytes] of Object.entries(originals)) expect(read(name).equals(bytes), name).toBe(true);
  });
});
