import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, cleanup, encodeProjectKey, filesystemStorage } from '../../src/index.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * Everything the filesystem store names by a session is named by its project
 * too: `blobs/packs/<project key>/<session id>.pack`. Packs of the older
 * layout, `blobs/packs/<session id>.pack`, are still read.
 */

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const blobOf = (text: string) => ({ hash: sha(Buffer.from(text)), bytes: Buffer.from(text) });
const day = 24 * 60 * 60 * 1000;
const ago = (days: number) => new Date(Date.now() - days * day);

const packOf = (project: TempProject, sessionId: string, root = project.root) => path.join(project.store, 'blobs', 'packs', encodeProjectKey(root), `${sessionId}.pack`);
const legacyPackOf = (project: TempProject, sessionId: string) => path.join(project.store, 'blobs', 'packs', `${sessionId}.pack`);
const logOf = (project: TempProject, sessionId: string, root = project.root) => path.join(project.store, 'projects', encodeProjectKey(root), `${sessionId}.jsonl`);

/** A closed session that tracked 30 small files and a large one, each then overwritten; returns its checkpoint and the originals. */
async function editedSession(project: TempProject, options: { sessionId?: string } = {}) {
  const originals: Record<string, Buffer> = { 'big.bin': randomBytes(1024 * 1024 + 17) };
  for (let index = 0; index < 30; index += 1) originals[`notes/${index}.md`] = Buffer.from(`note ${index} of ${project.root}\n`.repeat(index + 1));
  for (const [file, bytes] of Object.entries(originals)) project.write(file, bytes);
  const manager = await project.open(options);
  const checkpoint = await manager.checkpoint(newId());
  for (const file of Object.keys(originals)) {
    await manager.trackEdit(file);
    project.write(file, `${file} after the agent\n`);
  }
  await manager.close();
  return { sessionId: manager.sessionId, checkpoint, originals };
}

function expectFiles(project: TempProject, originals: Record<string, Buffer>, root = project.root): void {
  for (const [file, bytes] of Object.entries(originals)) expect(fs.readFileSync(path.join(root, file)).equals(bytes), file).toBe(true);
}

describe('filesystem store layout', () => {
  it('a session of the older layout (blobs/packs/<session id>.pack) reopens and rewinds every file; its new backups go to its project’s pack', async () => {
    const project = tempProject();
    const { sessionId, checkpoint, originals } = await editedSession(project);
    fs.renameSync(packOf(project, sessionId), legacyPackOf(project, sessionId));
    fs.rmdirSync(path.dirname(packOf(project, sessionId)));
    const legacyBytes = fs.readFileSync(legacyPackOf(project, sessionId));

    const resumed = await project.open({ resume: sessionId });
    const next = await resumed.checkpoint(newId());
    project.write('later.txt', 'tracked after the upgrade\n');
    await resumed.trackEdit('later.txt');
    project.write('later.txt', 'changed\n');
    expect((await resumed.rewindFiles(checkpoint)).skipped ?? []).toEqual([]);
    expectFiles(project, originals);
    expect(project.exists('later.txt')).toBe(true);
    await resumed.rewindFiles(next);
    expect(project.read('later.txt').toString()).toBe('tracked after the upgrade\n');
    await resumed.close();

    expect(fs.readFileSync(legacyPackOf(project, sessionId)).equals(legacyBytes)).toBe(true);
    expect(fs.readFileSync(packOf(project, sessionId)).includes('tracked after the upgrade')).toBe(true);
  });

  it('cleanup() removes a pack of the older layout only once no project has a log of that session id', async () => {
    const project = tempProject();
    const first = await editedSession(project);
    fs.renameSync(packOf(project, first.sessionId), legacyPackOf(project, first.sessionId));
    const otherRoot = path.join(path.dirname(project.root), 'other-project');
    fs.mkdirSync(otherRoot);
    const other = await CheckpointManager.open({ cwd: otherRoot, storeDir: project.store, sessionId: first.sessionId, durability: 'none' });
    await other.checkpoint(newId());
    await other.close();
    for (const file of [logOf(project, first.sessionId), legacyPackOf(project, first.sessionId)]) fs.utimesSync(file, ago(40), ago(40));

    const once = await cleanup({ storeDir: project.store, graceMs: 0 });
    expect(once.sessionsRemoved).toEqual([{ projectKey: encodeProjectKey(project.root), sessionId: first.sessionId }]);
    expect(fs.existsSync(legacyPackOf(project, first.sessionId))).toBe(true);

    fs.utimesSync(logOf(project, first.sessionId, otherRoot), ago(40), ago(40));
    const twice = await cleanup({ storeDir: project.store, graceMs: 0 });
    expect(twice.sessionsRemoved).toEqual([{ projectKey: encodeProjectKey(otherRoot), sessionId: first.sessionId }]);
    expect(fs.existsSync(legacyPackOf(project, first.sessionId))).toBe(false);
  });

  it('a moved project’s session keeps every backup: resumed from the new directory, it rewinds every file exactly, and its old pack is gone', async () => {
    const project = tempProject();
    const { sessionId, checkpoint, originals } = await editedSession(project);
    const movedRoot = `${project.root}-moved`;
    fs.renameSync(project.root, movedRoot);
    try {
      const resumed = await CheckpointManager.open({ cwd: movedRoot, storeDir: project.store, resume: sessionId, durability: 'none' });
      expect((await resumed.rewindFiles(checkpoint)).skipped ?? []).toEqual([]);
      await resumed.close();
      expectFiles(project, originals, movedRoot);
      expect(fs.existsSync(packOf(project, sessionId))).toBe(false);
      expect(fs.existsSync(packOf(project, sessionId, movedRoot))).toBe(true);
    } finally {
      fs.renameSync(movedRoot, project.root);
    }
  });
});

describe('filesystem storage: sessions of one id in two projects', () => {
  const sessionId = randomUUID();
  const keys = [
    { projectKey: '-tmp-one', sessionId },
    { projectKey: '-tmp-two', sessionId },
  ];

  it('hasBlobs(key, hashes) answers for that key: its own pack and the shared loose blobs, not the other project’s pack', async () => {
    const project = tempProject();
    const storage = filesystemStorage({ directory: project.store, durability: 'none' });
    const small = blobOf('kept in the first project’s pack');
    const large = { hash: '', bytes: randomBytes(1024 * 1024) };
    large.hash = sha(large.bytes);
    await storage.putBlobs(keys[0]!, [small, large]);

    expect(await storage.hasBlobs(keys[0]!, [small.hash, large.hash])).toEqual(new Set([small.hash, large.hash]));
    expect(await storage.hasBlobs(keys[1]!, [small.hash, large.hash])).toEqual(new Set([large.hash]));
    expect(await storage.getBlob(keys[1]!, small.hash)).toBeNull();
    await storage.close();
  });

  it('delete(key) removes that key’s log and pack only; listSessions counts each key’s own pack', async () => {
    const project = tempProject();
    const storage = filesystemStorage({ directory: project.store, durability: 'none' });
    const blobs = keys.map((key) => blobOf(`the backup of ${key.projectKey}`));
    for (const [index, key] of keys.entries()) await storage.append(key, [{ type: 'note', index }], [blobs[index]!]);
    const packSize = fs.statSync(path.join(project.store, 'blobs', 'packs', keys[0]!.projectKey, `${sessionId}.pack`)).size;
    const logSize = fs.statSync(storage.logPath(keys[0]!)).size;
    expect((await storage.listSessions(keys[0]!.projectKey)).map((session) => session.bytes)).toEqual([logSize + packSize]);

    await storage.delete(keys[0]!);

    expect(await storage.load(keys[0]!)).toBeNull();
    expect(fs.existsSync(path.join(project.store, 'blobs', 'packs', keys[0]!.projectKey, `${sessionId}.pack`))).toBe(false);
    expect(await storage.load(keys[1]!)).toEqual([{ type: 'note', index: 1 }]);
    expect(Buffer.from((await storage.getBlob(keys[1]!, blobs[1]!.hash))!).equals(blobs[1]!.bytes)).toBe(true);
    await storage.close();
  });
});
