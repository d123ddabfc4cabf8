import fs from 'node:fs';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { encodeProjectKey } from '../paths.js';
import type { LogRecord } from '../schemas.js';
import { BlobBatch } from '../store/blob-batch.js';
import { blobsNamedBy, SessionLog } from '../store/session-log.js';
import type { SessionKey, StorageAdapter } from '../store/storage-adapter.js';
import { now } from './clock.js';
import { thisHost } from './host.js';
import { SessionState } from './session-state.js';

/** The session as stored under another project key. */
interface StoredSession {
  readonly key: SessionKey;
  /** The project directory it belongs to there. */
  readonly root: string;
  /** The machine whose it is (see `ownerOf`); undefined in logs written before machines were recorded. */
  readonly host: string | undefined;
  readonly mtime: number;
}

/**
 * Follows a project that moved. When a session is resumed from a directory
 * it is not stored under, the store is searched for it; if the directory it
 * was recorded in no longer exists, the project was moved, and the session
 * (log and backups) is stored under the new directory's key, with a
 * `project-moved` record. Paths in the log are relative to the project root,
 * so nothing else changes. A session whose directory still exists belongs to
 * that other project and is refused.
 *
 * On a store shared by machines, a directory missing here may still exist on
 * the machine the session belongs to. So only a session of this machine is
 * *moved* (its old key deleted); another machine's is *copied*, and the
 * original stays for it. The copy is this machine's from then on, and a later
 * resume from yet another directory follows it rather than the original.
 *
 * Returns true when the session was moved or copied here. `assertLockHeld`
 * checks the lock of the session being opened under the new key before its
 * log is written there.
 */
export async function relocateSession(storage: StorageAdapter, sessionId: string, newRoot: string, assertLockHeld: () => Promise<void>): Promise<boolean> {
  const newKey = { projectKey: encodeProjectKey(newRoot), sessionId };
  const stored = await findElsewhere(storage, newKey, newRoot);
  if (stored.length === 0) return false;
  const source = chooseSource(stored, sessionId, newRoot);
  const move = (source.host ?? thisHost()) === thisHost();
  // A move deletes the old key: under its lock, so that no process is writing it meanwhile.
  const lock = move ? await storage.lock?.(source.key) : undefined;
  try {
    const log = new SessionLog(storage, source.key);
    // One load: a copy is taken while its machine may still write the original (it holds no lock here),
    // so the entries carried over are exactly those whose backups were copied.
    const loaded = await log.load();
    if (loaded === null) return false; // deleted since it was found
    await copyBackups(log, loaded.records, newKey);
    const moved = { type: 'project-moved', from: source.root, to: newRoot, at: now(), host: thisHost(), ...(move ? {} : { copy: true }) };
    await assertLockHeld();
    await storage.append(newKey, [...loaded.entries, moved]);
    if (move) await storage.delete(source.key);
  } finally {
    await lock?.release();
  }
  return true;
}

/** Every copy of the session under another project key, with where and whose it is. */
async function findElsewhere(storage: StorageAdapter, newKey: SessionKey, newRoot: string): Promise<StoredSession[]> {
  const { sessionId } = newKey;
  const found: StoredSession[] = [];
  for (const projectKey of (await storage.listProjects?.()) ?? []) {
    if (projectKey === newKey.projectKey) continue;
    const info = (await storage.listSessions(projectKey)).find((session) => session.sessionId === sessionId);
    if (info === undefined) continue;
    const key = { projectKey, sessionId };
    const loaded = await new SessionLog(storage, key).load();
    if (loaded === null) continue;
    const state = new SessionState(newRoot);
    for (const record of loaded.records) state.apply(record);
    if (state.projectPath === undefined) continue;
    found.push({ key, root: state.projectPath, host: ownerOf(loaded.records), mtime: info.mtime });
  }
  return found;
}

/**
 * The machine a session belongs to: the one that started it, or the last one
 * that moved or copied it. A resume on another machine at the same path does
 * not change it, so a move there copies (nothing is taken away).
 */
function ownerOf(records: readonly LogRecord[]): string | undefined {
  let host: string | undefined;
  for (const record of records) if (record.type === 'session-start' || record.type === 'project-moved') host = record.host;
  return host;
}

/**
 * Which stored session to follow: this machine's if there is one (a log
 * without a machine counts as this machine's, as earlier releases moved
 * every session), else another machine's; the most recently written of
 * those. One whose directory exists here belongs to that project: refused.
 */
function chooseSource(stored: readonly StoredSession[], sessionId: string, newRoot: string): StoredSession {
  const here = thisHost();
  const own = stored.filter((session) => (session.host ?? here) === here);
  const candidates = own.length > 0 ? own : stored;
  const present = candidates.find((session) => fs.existsSync(session.root));
  if (present !== undefined) {
    throw new RewindableError(
      RewindableErrorCode.PROJECT_MISMATCH,
      `Session ${sessionId} belongs to the project ${present.root}, not ${newRoot}. Open it with cwd: ${JSON.stringify(present.root)}.`,
      { details: { sessionId, cwd: present.root } },
    );
  }
  return candidates.reduce((latest, session) => (session.mtime > latest.mtime ? session : latest));
}

/**
 * Stores under `to` every backup the records name that `to` does not hold
 * yet. Never skipped because the store has the bytes for some other key: a
 * blob only the old key holds goes when that key is deleted.
 */
async function copyBackups(from: SessionLog, records: readonly LogRecord[], to: SessionKey): Promise<void> {
  const named = [...new Set(records.flatMap(blobsNamedBy))];
  const held = await from.storage.hasBlobs(to, named);
  const batch = new BlobBatch((blobs) => from.storage.putBlobs(to, blobs));
  for (const hash of named) {
    if (held.has(hash)) continue;
    const read = await from.readBlob(hash);
    // Unreadable under the old key already: a rewind reports it here as it would have there.
    if (read.ok) await batch.add({ hash, bytes: read.bytes });
  }
  const rest = batch.take();
  if (rest.length > 0) await from.storage.putBlobs(to, rest);
}
