import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanup, encodeProjectKey, listSessions } from '../../src/index.js';
import { runWorker } from '../helpers/child.js';
import { newId, snapshotTree, tempProject } from '../helpers/temp-project.js';

const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);

describe('listing sessions, read-only access and retention', () => {
  it('listSessions() lists a project’s sessions, newest first, with checkpoint counts', async () => {
    const project = tempProject();
    const older = await project.open();
    await older.checkpoint(newId());
    await older.close();
    const newer = await project.open();
    await newer.checkpoint(newId());
    await newer.checkpoint(newId());
    await newer.trackEdit('a.txt');
    await newer.close();
    const logs = path.join(project.store, 'projects', encodeProjectKey(project.root));
    fs.utimesSync(path.join(logs, `${older.sessionId}.jsonl`), daysAgo(1), daysAgo(1));

    const sessions = await listSessions({ cwd: project.root, storeDir: project.store });

    expect(sessions.map((session) => [session.sessionId, session.checkpoints, session.trackedFiles])).toEqual([
      [newer.sessionId, 2, 1],
      [older.sessionId, 1, 0],
    ]);
  });

  it('readOnly opens a session another process holds, and refuses to write', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    project.write('a.txt', 'b\n');

    const reader = await project.open({ resume: manager.sessionId, readOnly: true });
    expect(await reader.rewindFiles(turn, { dryRun: true })).toMatchObject({ canRewind: true, insertions: 1, deletions: 1 });
    await expect(reader.rewindFiles(turn)).rejects.toMatchObject({ code: 'READ_ONLY' });
    await expect(reader.checkpoint(newId())).rejects.toMatchObject({ code: 'READ_ONLY' });
    expect(project.read('a.txt').toString()).toBe('b\n');
  });

  it('cleanup() removes idle sessions and the blobs only they named, and keeps the rest', async () => {
    const project = tempProject();
    project.write('big.bin', Buffer.alloc(2 * 1024 * 1024, 1)); // a loose blob
    project.write('small.txt', 'small\n');
    const idle = await project.open();
    await idle.checkpoint(newId());
    await idle.trackEdit('big.bin');
    await idle.trackEdit('small.txt');
    await idle.close();
    const active = await project.open();
    await active.checkpoint(newId());
    await active.trackEdit('small.txt');
    await active.close();

    const logs = path.join(project.store, 'projects', encodeProjectKey(project.root));
    for (const file of [path.join(logs, `${idle.sessionId}.jsonl`), path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${idle.sessionId}.pack`)]) {
      fs.utimesSync(file, daysAgo(40), daysAgo(40));
    }
    const looseFolder = fs.readdirSync(path.join(project.store, 'blobs')).find((name) => name.length === 2)!;
    const loose = path.join(project.store, 'blobs', looseFolder, fs.readdirSync(path.join(project.store, 'blobs', looseFolder))[0]!);
    fs.utimesSync(loose, daysAgo(40), daysAgo(40));

    const result = await cleanup({ storeDir: project.store });

    expect(result.sessionsRemoved).toEqual([{ projectKey: encodeProjectKey(project.root), sessionId: idle.sessionId }]);
    expect(result.blobsRemoved).toBe(1);
    expect(result.bytesFreed).toBeGreaterThan(2 * 1024 * 1024);
    expect(fs.existsSync(loose)).toBe(false);
    expect((await listSessions({ cwd: project.root, storeDir: project.store })).map((session) => session.sessionId)).toEqual([active.sessionId]);
  });

  it('cleanup({ dryRun: true }) reports the idle sessions a clean-up would remove, and leaves every byte of the store as it was', async () => {
    const project = tempProject();
    project.write('big.bin', Buffer.alloc(2 * 1024 * 1024, 3)); // a loose blob
    const idle = await project.open();
    await idle.checkpoint(newId());
    await idle.trackEdit('big.bin');
    await idle.close();
    const active = await project.open();
    await active.checkpoint(newId());
    await active.close();
    for (const file of fs.readdirSync(project.store, { recursive: true, encoding: 'utf8' })) {
      if (!file.includes(active.sessionId)) fs.utimesSync(path.join(project.store, file), daysAgo(40), daysAgo(40));
    }
    const before = snapshotTree(project.store);

    const preview = await cleanup({ storeDir: project.store, dryRun: true });

    expect(preview).toMatchObject({ sessionsRemoved: [{ projectKey: encodeProjectKey(project.root), sessionId: idle.sessionId }], sessionsKept: 1, sessionsLocked: 0, blobsRemoved: 0 });
    expect(preview.bytesFreed).toBeGreaterThan(0);
    expect(snapshotTree(project.store)).toEqual(before);
    const removed = await cleanup({ storeDir: project.store });
    expect(removed.sessionsRemoved).toEqual(preview.sessionsRemoved);
    expect(removed.blobsRemoved).toBe(1);
  });

  it('cleanup() never removes a file in a project folder not named <uuid>.jsonl (a copy of a log), nor the backups it names', async () => {
    const project = tempProject();
    project.write('big.bin', Buffer.alloc(2 * 1024 * 1024, 2)); // a loose blob
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.trackEdit('big.bin');
    await manager.close();
    const logs = path.join(project.store, 'projects', encodeProjectKey(project.root));
    const log = path.join(logs, `${manager.sessionId}.jsonl`);
    const copy = path.join(logs, `${manager.sessionId}.backup.jsonl`);
    fs.copyFileSync(log, copy);
    const looseFolder = fs.readdirSync(path.join(project.store, 'blobs')).find((name) => name.length === 2)!;
    const loose = path.join(project.store, 'blobs', looseFolder, fs.readdirSync(path.join(project.store, 'blobs', looseFolder))[0]!);
    // The pack notes the loose blob as the session's: it ages with the session.
    const pack = path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${manager.sessionId}.pack`);
    for (const file of [log, copy, loose, pack]) fs.utimesSync(file, daysAgo(40), daysAgo(40));

    const result = await cleanup({ storeDir: project.store });

    expect(result.sessionsRemoved).toEqual([{ projectKey: encodeProjectKey(project.root), sessionId: manager.sessionId }]);
    expect(fs.existsSync(copy)).toBe(true);
    expect(fs.existsSync(loose)).toBe(true);
  });

  it('cleanup() keeps an idle session that a live process holds, and recent blobs', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.close();
    const logs = path.join(project.store, 'projects', encodeProjectKey(project.root));
    fs.utimesSync(path.join(logs, `${manager.sessionId}.jsonl`), daysAgo(40), daysAgo(40));
    const holder = runWorker({ options: { cwd: project.root, storeDir: project.store, resume: manager.sessionId }, steps: [{ do: 'signal', text: 'holding' }, { do: 'hang' }] });
    await holder.waitFor((line) => line.signal === 'holding');
    fs.utimesSync(path.join(logs, `${manager.sessionId}.jsonl`), daysAgo(40), daysAgo(40));
    const unnamed = path.join(project.store, 'blobs', 'ab', 'ab'.padEnd(64, '0'));
    fs.mkdirSync(path.dirname(unnamed), { recursive: true });
    fs.writeFileSync(unnamed, 'being written right now');

    const result = await cleanup({ storeDir: project.store });
    holder.child.kill('SIGKILL');
    await holder.done;

    expect(result).toMatchObject({ sessionsRemoved: [], sessionsLocked: 1, blobsRemoved: 0 });
    expect(fs.existsSync(unnamed)).toBe(true);
  });
});
