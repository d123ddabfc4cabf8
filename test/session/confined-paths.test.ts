import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectoryCache } from '../../src/fs/directory-cache.js';
import { CheckpointManager } from '../../src/index.js';
import { applyChanges } from '../../src/rewind/apply.js';
import { Measurements } from '../../src/rewind/measure.js';
import { encodeLines } from '../../src/store/filesystem/log-lines.js';
import { filesystemStorage } from '../../src/store/filesystem/filesystem-storage.js';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { encodeProjectKey } from '../../src/paths.js';
import type { StorageAdapter, StoreEntry } from '../../src/store/storage-adapter.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * Paths read back from a store are confined again before use: a log can come from a shared database, a mirror,
 * a copied or restored store, a fork source. A record naming a path outside the project root and the extra roots
 * (or inside the store) is damage: reported by every rewind, never read, written or deleted.
 */

const at = '2026-01-01T00:00:00.000Z';
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** Records a hostile log could hold, each naming somewhere a rewind must never write or delete. */
function craftedRecords(project: TempProject, checkpointId: string, storeFile: string): StoreEntry[] {
  const victim = path.join(project.outside, 'victim.txt');
  const overwritten = path.join(project.outside, 'overwritten.txt');
  const relativeToRoot = (absolute: string) => path.relative(project.root, absolute).split(path.sep).join('/');
  const agentContent = { kind: 'file', sha256: sha256('a: original\n'), size: 'a: original\n'.length, mode: 0o644 };
  return [
    // "Created by the agent": a rewind would delete it.
    { type: 'track', checkpointId, path: relativeToRoot(victim), state: { kind: 'absent' }, at },
    // A backup of stored content: a rewind would write it there.
    { type: 'track', checkpointId, path: overwritten, state: agentContent, at },
    // The store's own log, named through a path that climbs out and back in.
    { type: 'track', checkpointId, path: `sub/../${relativeToRoot(storeFile)}`, state: { kind: 'absent' }, at },
    { type: 'scan-backups', checkpointId, observedAtNs: '0', files: [], absent: ['../outside/scanned.txt'], links: [], at },
  ];
}

function plantOutside(project: TempProject): Record<string, string> {
  const files = { 'victim.txt': 'VICTIM\n', 'overwritten.txt': 'KEEP ME\n', 'scanned.txt': 'SCANNED\n' };
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(project.outside, name), content);
  return files;
}

function outsideFiles(project: TempProject): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(project.outside).map((name) => [name, fs.readFileSync(path.join(project.outside, name), 'utf8')]));
}

async function expectOnlyTheProjectRewound(manager: CheckpointManager, project: TempProject, turn: string, outside: Record<string, string>, storeFile: string) {
  const preview = await manager.rewindFiles(turn, { dryRun: true });
  expect(preview.canRewind).toBe(true);
  expect(preview.filesChanged).toEqual([project.file('a.txt')]);
  const refused = (preview.skipped ?? []).filter((entry) => entry.reason === 'outside-project').map((entry) => entry.path);
  expect(refused.sort()).toEqual([path.join(project.outside, 'overwritten.txt'), path.join(project.outside, 'scanned.txt'), path.join(project.outside, 'victim.txt'), storeFile].sort());
  expect(preview.skippedLinks).toBe(4);

  const result = await manager.rewindFiles(turn);
  expect(result.filesChanged).toEqual([project.file('a.txt')]);
  expect(result.skippedLinks).toBe(4);
  expect(project.read('a.txt').toString()).toBe('a: original\n');
  expect(outsideFiles(project)).toEqual(outside);
  // Nothing outside was ever tracked: no checkpoint lists it, so none reads it.
  for (const checkpoint of await manager.listCheckpoints()) expect(checkpoint.files).toEqual([project.file('a.txt')]);
}

describe('paths read back from a store', () => {
  it('refuses a store that holds the project (the project itself, or a folder above it) with INVALID_OPTIONS, writing nothing', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    for (const storeDir of [project.root, path.dirname(project.root)]) {
      await expect(CheckpointManager.open({ cwd: project.root, storeDir })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'storeDir' } });
    }
    expect(fs.readdirSync(project.root)).toEqual(['a.txt']);
  });

  it('a crafted filesystem log naming paths outside the project is opened, reported as outside-project, and never written or deleted', async () => {
    const project = tempProject();
    // The store inside the project, so that a record can name the store's own files from inside the root.
    const storeDir = path.join(project.root, '.store');
    project.write('a.txt', 'a: original\n');
    const outside = plantOutside(project);
    const writer = await project.open({ storeDir });
    const turn = await writer.checkpoint(newId());
    await writer.tools.write({ file_path: 'a.txt', content: 'a: agent\n' });
    await writer.close();

    // Append the crafted lines with valid checksums, as a copied or hostile store would hold them.
    const logFile = filesystemStorage({ directory: storeDir }).logPath({ projectKey: encodeProjectKey(project.root), sessionId: writer.sessionId });
    fs.appendFileSync(logFile, encodeLines(craftedRecords(project, turn, logFile)));
    const logBefore = fs.readFileSync(logFile);

    const manager = await project.open({ storeDir, resume: writer.sessionId });
    await expectOnlyTheProjectRewound(manager, project, turn, outside, logFile);
    expect(fs.readFileSync(logFile).subarray(0, logBefore.length).equals(logBefore)).toBe(true);
  });

  it('a shared store (any adapter) gets the same treatment, and so does a fork of such a session', async () => {
    const project = tempProject();
    const storage: StorageAdapter = memoryStorage();
    project.write('a.txt', 'a: original\n');
    const outside = plantOutside(project);
    const writer = await CheckpointManager.open({ cwd: project.root, storage });
    const turn = (await writer.recordUserMessage({ role: 'user', content: 'go' })).uuid;
    await writer.tools.write({ file_path: 'a.txt', content: 'a: agent\n' });
    await writer.close();
    const storeFile = path.join(project.root, 'never-a-store-file');
    fs.writeFileSync(storeFile, 'mine\n');
    await storage.append({ projectKey: encodeProjectKey(project.root), sessionId: writer.sessionId }, craftedRecords(project, turn, storeFile).slice(0, 2).concat(craftedRecords(project, turn, storeFile).slice(3)));

    const manager = await CheckpointManager.open({ cwd: project.root, storage, resume: writer.sessionId });
    const preview = await manager.rewindFiles(turn, { dryRun: true });
    expect((preview.skipped ?? []).filter((entry) => entry.reason === 'outside-project')).toHaveLength(3);
    const fork = await CheckpointManager.fork({ cwd: project.root, storage, fromSession: writer.sessionId, atMessage: turn });
    const forkResult = await fork.rewindFiles(turn);
    // A fork keeps the later first backups of tracked files (the two crafted `track` records), not later scans.
    expect(forkResult.skippedLinks).toBe(2);
    expect(forkResult.filesChanged).toEqual([project.file('a.txt')]);
    expect(outsideFiles(project)).toEqual(outside);
    await fork.close();

    project.write('a.txt', 'a: agent\n');
    const result = await manager.rewindFiles(turn);
    expect(result.skippedLinks).toBe(3);
    expect(result.filesChanged).toEqual([project.file('a.txt')]);
    expect(outsideFiles(project)).toEqual(outside);
    await manager.close();
  });

  it('a path of an extra root the session is no longer opened with is left alone, and tracked again once the root is given', async () => {
    const project = tempProject();
    const extra = path.join(project.outside, 'extra');
    fs.mkdirSync(extra);
    fs.writeFileSync(path.join(extra, 'e.txt'), 'e: original\n');
    const writer = await project.open({ extraRoots: [extra] });
    const turn = await writer.checkpoint(newId());
    await writer.tools.write({ file_path: path.join(extra, 'e.txt'), content: 'e: agent\n' });
    await writer.close();

    const without = await project.open({ resume: writer.sessionId });
    const result = await without.rewindFiles(turn);
    expect(result.skipped).toEqual([expect.objectContaining({ path: path.join(extra, 'e.txt'), reason: 'outside-project' })]);
    expect(fs.readFileSync(path.join(extra, 'e.txt'), 'utf8')).toBe('e: agent\n');
    await without.close();

    const withRoot = await project.open({ resume: writer.sessionId, extraRoots: [extra] });
    expect((await withRoot.rewindFiles(turn)).filesChanged).toEqual([path.join(extra, 'e.txt')]);
    expect(fs.readFileSync(path.join(extra, 'e.txt'), 'utf8')).toBe('e: original\n');
  });
});

describe('paths no file can have', () => {
  it('a crafted log naming a path with a NUL byte or a name over 255 bytes leaves the session usable, reported as invalid-path', async () => {
    const project = tempProject();
    project.write('a.txt', 'a: original\n');
    const writer = await project.open();
    const turn = await writer.checkpoint(newId());
    await writer.tools.write({ file_path: 'a.txt', content: 'a: agent\n' });
    await writer.close();
    const logFile = filesystemStorage({ directory: project.store }).logPath({ projectKey: encodeProjectKey(project.root), sessionId: writer.sessionId });
    const unnameable = ['a\u0000b.txt', `${'z'.repeat(300)}.txt`];
    fs.appendFileSync(logFile, encodeLines(unnameable.map((name) => ({ type: 'track', checkpointId: turn, path: name, state: { kind: 'absent' }, at }))));

    const manager = await project.open({ resume: writer.sessionId });
    await manager.checkpoint(newId());
    const preview = await manager.rewindFiles(turn, { dryRun: true });
    expect(preview.canRewind).toBe(true);
    expect((preview.skipped ?? []).map((entry) => entry.reason)).toEqual(['invalid-path', 'invalid-path']);
    const result = await manager.rewindFiles(turn);
    expect(result.filesChanged).toEqual([project.file('a.txt')]);
    expect(result.skippedLinks).toBe(2);
    expect(project.read('a.txt').toString()).toBe('a: original\n');
  });
});

describe('applying a rewind', () => {
  it('refuses a change outside the roots whatever the plan says, checked again just before the write', async () => {
    const project = tempProject();
    const victim = path.join(project.outside, 'victim.txt');
    fs.writeFileSync(victim, 'VICTIM\n', { mode: 0o644 });
    const current = { kind: 'file' as const, sha256: sha256('VICTIM\n'), size: 7, mode: 0o644 };
    const change = {
      path: victim,
      tracked: { path: victim, storedPath: victim, versions: [] },
      action: 'delete' as const,
      from: current,
      to: { kind: 'absent' as const },
      conflict: false,
    };
    const apply = async (extraRoots: string[]) => {
      const directories = new DirectoryCache();
      try {
        const readBlob = async () => ({ ok: false as const, reason: 'none' });
        const measurements = new Measurements({ readBlob });
        return await applyChanges({ readBlob, measurements, durable: false, maxFileBytes: 1 << 20, directories, confinement: { root: project.root, extraRoots, storeDirectory: undefined } }, [change]);
      } finally {
        directories.close();
      }
    };
    const refused = await apply([]);
    expect(refused.applied).toEqual([]);
    expect(refused.skipped).toEqual([expect.objectContaining({ path: victim, reason: 'outside-project' })]);
    expect(fs.readFileSync(victim, 'utf8')).toBe('VICTIM\n');
    // The same change inside an allowed root is made: the check, not the change, kept the file.
    expect((await apply([project.outside])).applied).toHaveLength(1);
    expect(fs.existsSync(victim)).toBe(false);
  });
});
