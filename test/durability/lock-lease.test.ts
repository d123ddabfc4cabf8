import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
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

/** How a child is started in a PID namespace of its own (`--kill-child`: it dies with the launcher), where this machine allows it. */
const newPidNamespace = [
  ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'],
  ['unshare', '--user', '--map-root-user', '--pid', '--fork', '--kill-child', '--mount-proc'],
].find((launcher) => spawnSync(launcher[0]!, [...launcher.slice(1), 'true'], { stdio: 'ignore' }).status === 0);

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** A pid no process has: that of a process that has just exited. */
const deadPid = () => spawnSync('true').pid;

describe('a lock whose pid does not name a process here', () => {
  it.runIf(newPidNamespace !== undefined)(
    'a live holder in another PID namespace with this host’s name keeps its lock: a second opener gets SESSION_LOCKED, saying when the lease expires',
    async () => {
      const { sandbox, sessionId, lockPath } = await newSession();
      const holder = await startTalkingChild('lease-holder', { root: sandbox.root, store: sandbox.store, sessionId }, newPidNamespace);
      expect(await holder.next()).toMatchObject({ holding: true });
      expect(ownerOf(lockPath).hostname).toBe(os.hostname());

      const refusal = await open(sandbox, sessionId).catch((error: unknown) => error);

      expect(refusal).toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringContaining('runs in another PID namespace') });
      expect((refusal as RewindableError).message).toContain('its lease expires at');
      holder.send('a.txt');
      expect(await holder.next()).toEqual({ tracked: 'a.txt' });
      holder.child.stdin.end();
      expect((await holder.exited).code).toBe(0);
      expect(fs.existsSync(lockPath)).toBe(false);
    },
  );

  /** A lock of this host whose process is gone, as if written in `identity` (another boot, another PID namespace, or an older version naming neither). */
  function writeLockOfThisHost(lockPath: string, identity: { pidNamespace?: string | null; bootId?: string | null }, renewedAgoMs: number): void {
    const owner = { pid: deadPid(), hostname: os.hostname(), processStart: '1', token: randomUUID(), acquiredAt: new Date().toISOString(), leaseMs: 60_000, ...identity };
    fs.writeFileSync(lockPath, JSON.stringify(owner));
    const renewedAt = new Date(Date.now() - renewedAgoMs);
    fs.utimesSync(lockPath, renewedAt, renewedAt);
  }

  // What this process's own locks record (null where there is no /proc).
  const ownNamespace = readOrNull(() => fs.readlinkSync('/proc/self/ns/pid'));
  const ownBoot = readOrNull(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());

  for (const [label, identity] of [
    ['from another boot', { pidNamespace: ownNamespace, bootId: 'a-boot-before-the-last-reboot' }],
    ['from another PID namespace', { pidNamespace: 'pid:[1]', bootId: ownBoot }],
  ] as const) {
    it(`a lock of this host ${label} is judged by its lease, not by its pid: refused within the lease, reclaimed once it ran out`, async () => {
      const { sandbox, sessionId, lockPath } = await newSession();

      writeLockOfThisHost(lockPath, identity, 1_000);
      await expect(open(sandbox, sessionId)).rejects.toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringContaining('its lease expires at') });

      writeLockOfThisHost(lockPath, identity, 61_000);
      const manager = await open(sandbox, sessionId);
      expect(ownerOf(lockPath).pid).toBe(process.pid);
      await manager.close();
    });
  }

  it('a lock of this host of an older version (no PID namespace nor boot recorded) whose process is gone is reclaimed at once, as before', async () => {
    const { sandbox, sessionId, lockPath } = await newSession();
    writeLockOfThisHost(lockPath, {}, 0);

    const manager = await open(sandbox, sessionId);

    expect(ownerOf(lockPath).pid).toBe(process.pid);
    await manager.close();
  });
});
