import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, filesystemStorage, RewindableError } from '../../src/index.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';
import { startTalkingChild } from './helpers/talking-child.js';

/**
 * The process of a lock written on another host cannot be checked from here.
 * Its holder renews the lock (touches it) every quarter lease; a lock of
 * another host left unrenewed for longer than its lease is reclaimed, and one
 * within its lease is refused with a message that says when it expires and
 * how to break it. A holder whose lock was broken or taken over is never
 * silently replaced: its next write fails with SESSION_LOCKED and writes nothing.
 */

const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

async function newSession(): Promise<{ sandbox: Sandbox; sessionId: string; lockPath: string }> {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  fs.writeFileSync(path.join(sandbox.root, 'a.txt'), 'a\n');
  fs.writeFileSync(path.join(sandbox.root, 'b.txt'), 'b\n');
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
  await manager.checkpoint();
  await manager.close();
  const lockPath = path.join(sandbox.store, 'projects', encodeProjectKey(sandbox.root), `${manager.sessionId}.lock`);
  return { sandbox, sessionId: manager.sessionId, lockPath };
}

/** A lock as a process on `hostname` writes it, last renewed `renewedAgoMs` ago. */
function writeForeignLock(lockPath: string, options: { hostname: string; renewedAgoMs: number; leaseMs?: number }): Date {
  const owner = { pid: 4242, hostname: options.hostname, processStart: '1', token: randomUUID(), acquiredAt: new Date(Date.now() - 3_600_000).toISOString() };
  fs.writeFileSync(lockPath, JSON.stringify(options.leaseMs === undefined ? owner : { ...owner, leaseMs: options.leaseMs }));
  const renewedAt = new Date(Math.floor((Date.now() - options.renewedAgoMs) / 1000) * 1000);
  fs.utimesSync(lockPath, renewedAt, renewedAt);
  return renewedAt;
}

const open = (sandbox: Sandbox, sessionId: string) => CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId });
const ownerOf = (lockPath: string) => JSON.parse(fs.readFileSync(lockPath, 'utf8')) as { pid: number; hostname: string };

describe('a lock written on another host', () => {
  for (const [label, leaseMs, renewedAgoMs] of [
    ['whose lease ran out', 60_000, 61_000],
    ['of an older version (no lease stated) unrenewed for longer than the default lease', undefined, 121_000],
  ] as const) {
    it(`a lock from another host ${label} is reclaimed, and the reclaimer then holds the session`, async () => {
      const { sandbox, sessionId, lockPath } = await newSession();
      writeForeignLock(lockPath, { hostname: 'a-host-that-is-gone', renewedAgoMs, ...(leaseMs !== undefined ? { leaseMs } : {}) });

      const manager = await open(sandbox, sessionId);

      expect(ownerOf(lockPath).pid).toBe(process.pid);
      await expect(open(sandbox, sessionId)).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
      await manager.close();
    });
  }

  it('a lock from another host within its lease is refused, saying when the lease expires and how to break the lock', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const renewedAt = writeForeignLock(lockPath, { hostname: 'build-container-7', renewedAgoMs: 1_000, leaseMs: 300_000 });

    const refusal = await open(sandbox, sessionId).catch((error: unknown) => error);

    expect(RewindableError.isInstance(refusal) && refusal.code).toBe('SESSION_LOCKED');
    const message = (refusal as RewindableError).message;
    expect(message).toContain('process 4242 on build-container-7');
    expect(message).toContain(`its lease expires at ${new Date(renewedAt.getTime() + 300_000).toISOString()}`);
    expect(message).toContain(`rewindable unlock ${sessionId} --force`);
    expect(message).toContain('two writers on one session lose backups');
    expect(ownerOf(lockPath).hostname).toBe('build-container-7');
  });

  it('a live holder on another host keeps renewing its lock past its lease, and is never taken over', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const leaseMs = 2_000;
    const holder = await startTalkingChild('lease-holder', { root: sandbox.root, store: sandbox.store, sessionId, hostname: 'another-host', lockLeaseMs: leaseMs });
    expect(await holder.next()).toMatchObject({ holding: true });

    for (let round = 0; round < 3; round += 1) {
      await sleep(leaseMs * 1.25);
      await expect(open(sandbox, sessionId)).rejects.toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringContaining('on another-host') });
    }
    holder.send('a.txt');
    expect(await holder.next()).toEqual({ tracked: 'a.txt' });

    holder.child.stdin.end();
    expect((await holder.exited).code).toBe(0);
    expect(fs.existsSync(lockPath)).toBe(false);
  });
});

describe('a holder is never silently replaced', () => {
  it('a holder whose lock was broken gets SESSION_LOCKED on its next write, and writes nothing; the new holder keeps its lock', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const holder = await open(sandbox, sessionId);
    const other = filesystemStorage({ directory: sandbox.store });
    const broken = await other.breakLock({ projectKey: encodeProjectKey(sandbox.root), sessionId });
    await other.close();
    expect(broken).toMatchObject({ pid: process.pid, live: true });
    const newHolder = await open(sandbox, sessionId);
    const storeBefore = snapshotStore(sandbox);

    await expect(holder.trackEdit('a.txt')).rejects.toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringContaining('is no longer locked by this process') });
    await expect(holder.checkpoint()).rejects.toMatchObject({ code: 'SESSION_LOCKED' });

    expect(snapshotStore(sandbox)).toEqual(storeBefore);
    await holder.close();
    expect(fs.existsSync(lockPath)).toBe(true);
    await newHolder.trackEdit('b.txt');
    await newHolder.close();
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('a holder whose lock another host took over (after finding its lease expired) gets SESSION_LOCKED on its next write, and writes nothing', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    const holder = await open(sandbox, sessionId);
    fs.rmSync(lockPath);
    writeForeignLock(lockPath, { hostname: 'the-host-that-reclaimed-it', renewedAgoMs: 0, leaseMs: 120_000 });
    const storeBefore = snapshotStore(sandbox);

    await expect(holder.trackEdit('a.txt')).rejects.toMatchObject({ code: 'SESSION_LOCKED' });

    expect(snapshotStore(sandbox)).toEqual(storeBefore);
    await holder.close();
    expect(ownerOf(lockPath).hostname).toBe('the-host-that-reclaimed-it');
  });
});

/** Every file of the store but the lock: name -> bytes. */
function snapshotStore(sandbox: Sandbox): Record<string, string> {
  const files: Record<string, string> = {};
  for (const file of fs.readdirSync(sandbox.store, { recursive: true, encoding: 'utf8' })) {
    const full = path.join(sandbox.store, file);
    if (fs.statSync(full).isFile() && !file.endsWith('.lock')) files[file] = fs.readFileSync(full).toString('base64');
  }
  return files;
}
