import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, cleanup, encodeProjectKey } from '../../src/index.js';
import { postgresStorage } from '../../src/store/postgres/postgres-storage.js';
import { crashAndRestart, fastTestSettings, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';
import { tempProject } from '../helpers/temp-project.js';
import { startSessionProcess } from './helpers/session-process.js';
import { startLossyProxy } from './helpers/tcp-proxy.js';

/**
 * The PostgreSQL lock of a session belongs to the manager that took it: it
 * is held while that manager lives (taken back as soon as a dropped
 * connection can be replaced), it fences off that manager alone once another
 * process took the session, and it is one lock however the schema is named.
 */

let server: PostgresServer;
let admin: pg.Pool;
beforeAll(async () => {
  server = await startPostgres({ settings: fastTestSettings });
  admin = new pg.Pool({ connectionString: server.connectionString });
  admin.on('error', () => {}); // idle connections are cut when a test restarts the server
});
afterAll(async () => {
  await admin?.end();
  await server?.destroy();
});

/** Session locks the server holds right now, for connections of rewindable's lock holders. */
async function heldSessionLocks(): Promise<number> {
  const result = await admin.query<{ held: number }>(
    `SELECT count(*)::int AS held FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'rewindable lock%'`,
  );
  return result.rows[0]!.held;
}

describe('the lock of a session in PostgreSQL', () => {
  it('a manager whose lock another process took over writes nothing, also once its process has opened the session again on the same adapter', async () => {
    const project = tempProject();
    project.write('a.txt', 'ORIGINAL\n');
    const network = await startLossyProxy(server.port);
    const storage = postgresStorage({ connection: `postgres://rewindable@127.0.0.1:${network.port}/postgres`, retryDelayMs: 20 });
    const otherProcess = startSessionProcess({ cwd: project.root, storage: { kind: 'postgres', connection: server.connectionString } });
    const managers: CheckpointManager[] = [];
    try {
      const stale = await CheckpointManager.open({ cwd: project.root, storage, durability: 'none' });
      managers.push(stale);
      await stale.checkpoint(randomUUID());
      // Its lock goes with its connection, and it cannot take it back before the network returns.
      network.cut();
      await expect.poll(heldSessionLocks, { timeout: 10_000, interval: 20 }).toBe(0);
      expect(await otherProcess.send({ do: 'open', resume: stale.sessionId })).toEqual({ opened: stale.sessionId });
      expect(await otherProcess.send({ do: 'edit', path: 'a.txt', content: 'OTHER PROCESS\n' })).toEqual({ edited: 'a.txt' });
      expect(await otherProcess.send({ do: 'close' })).toEqual({ closed: true });
      network.restore();
      await expect(stale.checkpoint(randomUUID())).rejects.toMatchObject({ code: 'SESSION_LOCKED', details: { reason: 'lock-lost' } });
      // Superseded, it never tries to take the lock again: a retry still scheduled from the outage would hold the
      // lock for a moment, long enough for the reopen below to find the session locked. Its longest wait is 2 s.
      const connectionsWhenSuperseded = network.connections;
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(network.connections).toBe(connectionsWhenSuperseded);

      // As the error says: reopen the session. The new manager holds it; the stale one still writes nothing.
      const reopened = await CheckpointManager.open({ cwd: project.root, storage, resume: stale.sessionId, durability: 'none' });
      managers.push(reopened);
      const key = { projectKey: encodeProjectKey(project.root), sessionId: stale.sessionId };
      const entries = await storage.load(key);
      project.write('new.txt', 'new\n');
      await expect(stale.checkpoint(randomUUID())).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
      await expect(stale.trackEdit('new.txt')).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
      expect(await storage.load(key)).toEqual(entries);

      await reopened.trackEdit('new.txt');
      const undo = await reopened.rewindFiles((await reopened.listCheckpoints())[0]!.id);
      expect(undo).toMatchObject({ canRewind: true, skippedLinks: 0 });
      expect(project.read('a.txt').toString()).toBe('ORIGINAL\n');
    } finally {
      for (const manager of managers) await manager.close().catch(() => {});
      await otherProcess.end();
      await storage.close();
      await network.close();
    }
  });

  it('a live holder takes its lock back as soon as the restarted server answers, without writing: cleanup() keeps its session, which rewinds exactly', async () => {
    const project = tempProject();
    project.write('a.txt', 'ORIGINAL\n');
    const holder = startSessionProcess({ cwd: project.root, storage: { kind: 'postgres', connection: server.connectionString } });
    try {
      const { opened: sessionId } = (await holder.send({ do: 'open' })) as { opened: string };
      const first = randomUUID();
      expect(await holder.send({ do: 'checkpoint', id: first })).toEqual({ checkpoint: first });
      expect(await holder.send({ do: 'edit', path: 'a.txt', content: 'AGENT\n' })).toEqual({ edited: 'a.txt' });
      await crashAndRestart(server, admin);

      // The holder is idle: nothing but its own retrying takes the lock back.
      await expect.poll(heldSessionLocks, { timeout: 20_000, interval: 50 }).toBe(1);
      const retention = postgresStorage({ connection: server.connectionString });
      const result = await cleanup({ storage: retention, olderThanDays: 0, graceMs: 0 }).finally(() => retention.close());
      expect(result.sessionsRemoved.map((removed) => removed.sessionId)).not.toContain(sessionId);
      expect(result.sessionsLocked).toBeGreaterThanOrEqual(1);

      expect(await holder.send({ do: 'rewind', id: first })).toMatchObject({ rewind: { canRewind: true, skippedLinks: 0 } });
      expect(project.read('a.txt').toString()).toBe('ORIGINAL\n');
      expect(await holder.send({ do: 'close' })).toEqual({ closed: true });
    } finally {
      await holder.end();
    }
  });

  it('the default schema named (schema: "public") and reached through the search_path is one store with one lock: a session held through one is refused through the other', async () => {
    const project = tempProject();
    project.write('a.txt', 'ORIGINAL\n');
    const throughSearchPath = postgresStorage({ connection: server.connectionString });
    const named = postgresStorage({ connection: server.connectionString, schema: 'public' });
    try {
      const holder = await CheckpointManager.open({ cwd: project.root, storage: throughSearchPath, durability: 'none' });
      await holder.checkpoint(randomUUID());
      await expect(CheckpointManager.open({ cwd: project.root, storage: named, resume: holder.sessionId, durability: 'none' })).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
      await holder.trackEdit('a.txt'); // still its session
      await holder.close();

      const next = await CheckpointManager.open({ cwd: project.root, storage: named, resume: holder.sessionId, durability: 'none' });
      await expect(CheckpointManager.open({ cwd: project.root, storage: throughSearchPath, resume: holder.sessionId, durability: 'none' })).rejects.toMatchObject({ code: 'SESSION_LOCKED' });
      await next.close();
    } finally {
      await throughSearchPath.close();
      await named.close();
    }
  });
});
