import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { tempProject } from '../helpers/temp-project.js';

const key = { projectKey: '-memory-project', sessionId: '0b6f2c1e-9a2d-4c3b-8e5f-7a6b5c4d3e2f' };
const previousHome = process.env.REWINDABLE_HOME;
afterEach(() => {
  if (previousHome === undefined) delete process.env.REWINDABLE_HOME;
  else process.env.REWINDABLE_HOME = previousHome;
});

describe('memoryStorage', () => {
  it('is deterministic: with a given clock, the same calls give the same listings', async () => {
    const run = async () => {
      let now = 1_000;
      const storage = memoryStorage({ clock: () => (now += 10) });
      await storage.append(key, [{ type: 'a' }]);
      await storage.append({ ...key, sessionId: 'second' }, [{ type: 'b', text: 'ünï' }], [{ hash: 'h'.repeat(64), bytes: Buffer.from('blob') }]);
      return storage.listSessions(key.projectKey);
    };
    const first = await run();
    expect(first).toEqual([
      { sessionId: key.sessionId, mtime: 1_010, bytes: 12 },
      { sessionId: 'second', mtime: 1_030, bytes: 27 + 4 }, // the entry's UTF-8 bytes and its blob
    ]);
    expect(await run()).toEqual(first);
  });

  it('snapshot() returns copies of everything stored', async () => {
    const storage = memoryStorage();
    const bytes = Buffer.from('backup');
    const hash = createHash('sha256').update(bytes).digest('hex');
    await storage.append(key, [{ type: 'entry', n: 1 }], [{ hash, bytes }]);
    const snapshot = storage.snapshot();
    expect(snapshot.sessions).toEqual([{ ...key, entries: [{ type: 'entry', n: 1 }] }]);
    expect(Buffer.from(snapshot.blobs.get(hash)!).toString()).toBe('backup');
    snapshot.blobs.get(hash)!.fill(0);
    snapshot.sessions[0]!.entries.push({ type: 'added' });
    expect(storage.snapshot().sessions[0]!.entries).toHaveLength(1);
    expect(Buffer.from((await storage.getBlob(key, hash))!).toString()).toBe('backup');
  });

  it('rejects an entry that is not JSON before storing anything of the append', async () => {
    const storage = memoryStorage();
    const circular: Record<string, unknown> = { type: 'circular' };
    circular.self = circular;
    await expect(storage.append(key, [{ type: 'fine' }, circular as { type: string }])).rejects.toThrow(TypeError);
    expect(await storage.load(key)).toBeNull();
  });

  it('a CheckpointManager on memory storage writes nothing to disk outside the project', async () => {
    const project = tempProject();
    const home = path.join(project.outside, 'rewindable-home');
    process.env.REWINDABLE_HOME = home;
    const storage = memoryStorage();
    project.write('file.txt', 'before\n');
    const manager = await project.open({ storage, storeDir: undefined });
    const message = randomUUID();
    await manager.checkpoint(message);
    await manager.trackEdit('file.txt');
    project.write('file.txt', 'after\n');
    await manager.rewindFiles(message);
    expect(project.read('file.txt').toString()).toBe('before\n');
    await manager.close();
    expect(fs.existsSync(home)).toBe(false);
    expect(fs.existsSync(project.store)).toBe(false);
    expect(storage.snapshot().sessions.map((session) => session.sessionId)).toEqual([manager.sessionId]);
  });
});
