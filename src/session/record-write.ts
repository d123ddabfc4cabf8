import fs from 'node:fs';
import { fileTypeOf } from '../fs/inspect-path.js';
import type { FileState, Observation, WriteRecord } from '../schemas.js';
import { sha256 } from '../hash.js';
import { now } from './clock.js';
import { observePath } from './observe-path.js';
import type { ObservedPath } from '../fs/inspect-path.js';
import type { Session } from './session.js';

export interface RecordWriteOptions {
  /** Name of the tool that wrote (`Write`, `Edit` ...). */
  tool?: string;
  /** The framework's id of the tool call. */
  toolCallId?: string;
  /** The bytes the tool wrote, when it has them: saves reading the file back. */
  content?: Uint8Array;
}

/**
 * Records what a tool wrote to a tracked file, its hash and its bytes, for
 * conflict reports and merges. Untracked paths are ignored.
 */
export async function recordToolWrite(session: Session, absolute: string, details: RecordWriteOptions): Promise<void> {
  const tracked = session.state.paths.get(absolute);
  if (tracked === undefined) return;
  const observation: ObservedPath =
    details.content !== undefined
      ? { state: writtenState(absolute, details.content), content: Buffer.from(details.content.buffer, details.content.byteOffset, details.content.byteLength) }
      : observePath(absolute, undefined, { maxBytes: session.maxFileBytes, read: 'always' });
  // The bytes go with the record: undoing the tools' writes on top of a later edit merges from them.
  const blob = observation.state.kind === 'file' && observation.content !== undefined ? session.backupOf(observation) : undefined;
  const stored = observation.state.kind === 'file' && (blob !== undefined || session.isStored(observation.state.sha256));
  await session.append(
    [writeRecord(tracked.storedPath, observation.state, details, observation.observed, stored)],
    blob === undefined ? [] : [blob],
    { flush: false }, // bookkeeping for conflict reports and merges, not a backup: the next durable append carries it
  );
}

/** The record of what a tool wrote to a tracked path (`storedPath`). */
export function writeRecord(storedPath: string, state: FileState, details: Pick<RecordWriteOptions, 'tool' | 'toolCallId'>, observed?: Observation, stored = false): WriteRecord {
  return {
    type: 'write',
    path: storedPath,
    state,
    ...(observed ? { observed } : {}),
    ...(details.tool !== undefined ? { tool: details.tool } : {}),
    ...(details.toolCallId !== undefined ? { toolCallId: details.toolCallId } : {}),
    ...(stored ? { stored: true as const } : {}),
    at: now(),
  };
}

/** The state a tool just wrote, from its own bytes and one lstat (the mode, and that no link took the file's place). */
function writtenState(absolute: string, content: Uint8Array): FileState {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(absolute);
  } catch {
    return { kind: 'absent' };
  }
  if (stat.isSymbolicLink()) return { kind: 'symlink' };
  if (!stat.isFile()) return { kind: 'not-regular', fileType: fileTypeOf(stat) };
  return { kind: 'file', sha256: sha256(content), size: content.length, mode: stat.mode & 0o7777 };
}
