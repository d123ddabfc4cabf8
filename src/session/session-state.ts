import path from 'node:path';
import { Transcript } from '../conversation/transcript.js';
import { fromStoredPath, isConfined, UuidMap, uuidKey, type PathScope } from '../paths.js';
import type { LastSeen } from '../fs/inspect-path.js';
import type { FileState, LogRecord, Observation, RewindBeginRecord, SessionStartRecord } from '../schemas.js';

/**
 * The in-memory picture of one session, rebuilt from its log record by
 * record. Everything here can be recomputed from the log, which is why a
 * resumed session rewinds exactly like the live one.
 */

export interface CheckpointInfo {
  readonly id: string;
  /** Position in the session, 0 for the first checkpoint. */
  readonly index: number;
  readonly createdAt: string;
  readonly reason: 'message' | 'pre-rewind';
}

/** A state of a path as the session knows it, with the signature it was seen with (files only). */
export interface KnownWrite {
  state: FileState;
  observed?: Observation | undefined;
}

export interface PathVersion extends KnownWrite {
  /** The checkpoint whose state this is. */
  checkpointIndex: number;
}

export interface TrackedPath {
  /** Canonical absolute path. */
  readonly path: string;
  /** As stored in the log (relative to the project root where possible). */
  readonly storedPath: string;
  /** One entry per checkpoint at which the state was recorded, oldest first. The first is the first backup. */
  readonly versions: PathVersion[];
  /** What the tracked tools (or a rewind) last wrote, for conflict detection. */
  lastWrite?: KnownWrite | undefined;
  /**
   * The newest stored content seen on disk, with the stat signature it had
   * then; a file whose signature still matches need not be read again.
   */
  lastSeen?: LastSeen | undefined;
  /** Found by the capture scope (shell changes) rather than named by a tool. */
  captured?: boolean;
  /** How many of its nearest ancestors were missing at its first backup, "absent" (`TrackRecord.missingParents`). */
  missingParents?: number;
  /** The recorded tool writes its content now comes from, newest first (a rewind that changes the file takes some back). */
  writeLine?: WriteLine | undefined;
  /** Every change of `writeLine`, with how many checkpoint records came before it. */
  writeLineChanges?: Array<{ checkpointRecords: number; line: WriteLine | undefined }>;
}

/** One recorded tool write, and the ones the content it wrote over came from. */
export interface WriteLine {
  readonly toolCallId: string | undefined;
  readonly previous: WriteLine | undefined;
}

/** A tool call of one turn, with the files it wrote. */
export interface ToolCallWrites {
  /** The framework's id of the call. */
  toolCallId: string;
  /** The tool's name, as recorded with its writes. */
  tool?: string;
  /** Absolute paths, in the order written. */
  files: string[];
}

/** Besides the project root, where the paths a session's records name may lead. */
export type SessionConfinement = Pick<PathScope, 'extraRoots' | 'storeDirectory'>;

export class SessionState {
  start: SessionStartRecord | undefined;
  readonly checkpoints: CheckpointInfo[] = [];
  /** By id, whatever its case (see `canonicalUuid`). */
  readonly checkpointsById = new UuidMap<CheckpointInfo>();
  readonly paths = new Map<string, TrackedPath>();
  /** The directories of the tracked paths: where reopening the session sweeps for temporary files of writes cut short. */
  readonly directoriesOfPaths = new Set<string>();
  /** A rewind that began but has no end record: a crash interrupted it. */
  interruptedRewind: RewindBeginRecord | undefined;
  readonly transcript = new Transcript();
  /** Paths a tracked tool wrote, by the checkpoint whose turn it was. */
  private readonly writtenDuring = new Map<number, Set<string>>();
  /** The tool calls (with an id) of each turn, by checkpoint index and call id. */
  private readonly callsDuring = new Map<number, Map<string, ToolCallWrites>>();
  /** Paths with recorded tool writes. */
  private readonly written = new Set<TrackedPath>();
  /** Checkpoint records applied so far (refreshing a checkpoint records it again). */
  private checkpointRecords = 0;
  /** For each checkpoint (by index), `checkpointRecords` once its state was last recorded. */
  private readonly checkpointRecordedAt: number[] = [];

  /**
   * Paths records name that are never acted on, absolute (normalized), with
   * why: `outside-project`, outside the project root and the extra roots or
   * inside the store (a crafted or foreign log, or an extra root the session
   * is no longer opened with); `invalid-path`, a name no file can have (a NUL
   * byte, a name over 255 bytes: only a damaged or crafted log holds one).
   * They are never tracked, read or written; every rewind reports them.
   */
  readonly refusedPaths = new Map<string, 'outside-project' | 'invalid-path'>();

  /** `confinement`: where the paths records name may lead besides the root (see `isConfined`); by default nowhere. */
  constructor(
    public root: string,
    readonly confinement: SessionConfinement = { extraRoots: [], storeDirectory: undefined },
  ) {}

  /** The project directory the session belongs to now (it may have moved since the session began). */
  get projectPath(): string | undefined {
    return this.movedTo ?? this.start?.cwd;
  }

  private movedTo: string | undefined;
  /** When the last scan of the capture scope started (ns since epoch). */
  lastScanStartedAtNs: bigint | undefined;
  /** The rules the last scan applied (`scanRules`), when its record says. */
  lastScanRules: string | undefined;
  /** Files the last scan found in scope but could not back up (absolute paths). */
  lastScanLeftOut: ReadonlySet<string> = new Set();

  get latestCheckpoint(): CheckpointInfo | undefined {
    return this.checkpoints.at(-1);
  }

  /** What a scan of the capture scope knew (see `scanKnowledge` in schemas.ts), kept for the next scan. */
  noteScan(startedAtNs: string | bigint, known: { scanRules?: string | undefined; scanLeftOut?: readonly string[] | undefined }): void {
    this.lastScanStartedAtNs = BigInt(startedAtNs);
    this.lastScanRules = known.scanRules;
    this.lastScanLeftOut = new Set((known.scanLeftOut ?? []).map((stored) => fromStoredPath(stored, this.root)));
  }

  apply(record: LogRecord): void {
    switch (record.type) {
      case 'session-start':
        this.start = record;
        return;
      case 'checkpoint': {
        let checkpoint = this.checkpointsById.get(record.id);
        if (checkpoint === undefined) {
          checkpoint = { id: uuidKey(record.id), index: this.checkpoints.length, createdAt: record.createdAt, reason: record.reason };
          this.checkpoints.push(checkpoint);
          this.checkpointsById.set(record.id, checkpoint);
        }
        for (const file of record.files) this.recordVersion(file.path, checkpoint.index, file.state, file.observed);
        if (record.scanStartedAtNs !== undefined) this.noteScan(record.scanStartedAtNs, record);
        this.checkpointRecordedAt[checkpoint.index] = ++this.checkpointRecords;
        return;
      }
      case 'track': {
        const checkpoint = this.checkpointsById.get(record.checkpointId);
        if (checkpoint === undefined) return;
        const tracked = this.recordVersion(record.path, checkpoint.index, record.state, record.observed);
        if (record.missingParents !== undefined && tracked?.versions.length === 1) tracked.missingParents = record.missingParents;
        return;
      }
      case 'scan-backups': {
        const checkpoint = this.checkpointsById.get(record.checkpointId);
        if (checkpoint === undefined) return;
        const first = (storedPath: string, state: FileState, observed?: Observation) => {
          const absolute = fromStoredPath(storedPath, this.root);
          if (this.paths.has(absolute)) return; // only first backups
          this.recordVersion(storedPath, checkpoint.index, state, observed);
          const tracked = this.paths.get(absolute);
          if (tracked !== undefined) tracked.captured = true;
        };
        for (const [storedPath, sha256, size, mode, sig] of record.files) first(storedPath, { kind: 'file', sha256, size, mode }, { sig, atNs: record.observedAtNs });
        for (const storedPath of record.absent) first(storedPath, { kind: 'absent' });
        for (const storedPath of record.links) first(storedPath, { kind: 'symlink' });
        return;
      }
      case 'capture':
        this.noteScan(record.scanStartedAtNs, record);
        return;
      case 'write': {
        const tracked = this.paths.get(fromStoredPath(record.path, this.root));
        // Not `lastSeen`: what a tool wrote is known by hash only, its bytes are not stored.
        if (tracked !== undefined) tracked.lastWrite = { state: record.state, observed: record.observed };
        const turn = this.latestCheckpoint?.index;
        if (tracked !== undefined && turn !== undefined) {
          const written = this.writtenDuring.get(turn) ?? new Set<string>();
          written.add(tracked.path);
          this.writtenDuring.set(turn, written);
          if (record.toolCallId !== undefined) this.noteCall(turn, record.toolCallId, record.tool, tracked.path);
        }
        if (tracked !== undefined) this.changeWriteLine(tracked, { toolCallId: record.toolCallId, previous: tracked.writeLine });
        return;
      }
      case 'rewind-begin':
        this.interruptedRewind = record;
        return;
      case 'message':
        this.transcript.add(record);
        return;
      case 'conversation-rewind':
        this.transcript.moveLeaf(record.leafUuid);
        return;
      case 'project-moved':
        this.movedTo = record.to;
        return;
      case 'discard':
        return;
      case 'rewind-end': {
        const begin = this.interruptedRewind;
        this.interruptedRewind = undefined;
        if (begin === undefined || begin.rewindId !== record.rewindId) return;
        const complete = record.status === 'complete';
        const target = this.checkpointsById.get(complete ? begin.target : begin.undoCheckpointId);
        if (target === undefined) return;
        const written = complete ? writtenStates(begin) : undefined;
        const before = this.checkpointsById.get(begin.undoCheckpointId);
        for (const stored of record.filesChanged) {
          const tracked = this.paths.get(fromStoredPath(stored, this.root));
          if (tracked === undefined) continue;
          const state = written?.get(stored);
          // What a completed rewind wrote becomes what the tools last wrote. A rolled-back one wrote nothing
          // that stays: what the tools last wrote is as before it, and someone else's edit is still theirs.
          if (complete) tracked.lastWrite = { state: this.writtenByRewind(tracked, state, target, before) };
          // A merged file's content comes from the tool calls of both sides: its calls stay as they were.
          if (state === undefined && (tracked.writeLine !== undefined || tracked.writeLineChanges !== undefined)) this.changeWriteLine(tracked, this.writeLineAt(tracked, target.index));
        }
        return;
      }
    }
  }

  /**
   * What the tools' side of a file is after a completed rewind to `target`:
   * the state it wrote, or, for a merge (`computed`) that kept someone else's
   * edit (the file was not what the tools last wrote when the rewind began),
   * the restored version; the edit stays someone else's, so a later merge
   * keeps it and a later rewind counts it as a conflict.
   */
  private writtenByRewind(tracked: TrackedPath, computed: FileState | undefined, target: CheckpointInfo, before: CheckpointInfo | undefined): FileState {
    const restored = this.versionAt(tracked, target.index).state;
    if (computed === undefined) return restored;
    const keptOtherEdit = before !== undefined && tracked.lastWrite !== undefined && !sameState(this.versionAt(tracked, before.index).state, tracked.lastWrite.state);
    return keptOtherEdit ? restored : computed;
  }

  /**
   * The tool calls whose writes a rewind to the checkpoint takes back, by
   * path: the recorded writes the file's content now comes from that its
   * content at the checkpoint did not (writes a completed rewind took back
   * since are not counted again), oldest first, each call once. Only paths
   * with such calls are listed; writes recorded without a call id count for
   * nothing here.
   */
  toolCallsTakenBack(checkpointIndex: number): Map<string, string[]> {
    const byPath = new Map<string, string[]>();
    for (const tracked of this.written) {
      const kept = new Set<WriteLine>();
      for (let line = this.writeLineAt(tracked, checkpointIndex); line !== undefined; line = line.previous) kept.add(line);
      const ids: string[] = [];
      for (let line = tracked.writeLine; line !== undefined && !kept.has(line); line = line.previous) if (line.toolCallId !== undefined) ids.push(line.toolCallId);
      if (ids.length > 0) byPath.set(tracked.path, [...new Set(ids.reverse())]);
    }
    return byPath;
  }

  /** The tool calls (with an id) of the turn of a checkpoint, in the order they first wrote, with the files each wrote. */
  toolCallsDuring(checkpointIndex: number): ToolCallWrites[] {
    return [...(this.callsDuring.get(checkpointIndex)?.values() ?? [])].map((call) => ({ ...call, files: [...call.files] }));
  }

  /** The write line of a path when the checkpoint's state was (last) recorded. */
  private writeLineAt(tracked: TrackedPath, checkpointIndex: number): WriteLine | undefined {
    const recordedAt = this.checkpointRecordedAt[checkpointIndex] ?? 0;
    let line: WriteLine | undefined;
    for (const change of tracked.writeLineChanges ?? []) {
      if (change.checkpointRecords >= recordedAt) break;
      line = change.line;
    }
    return line;
  }

  private changeWriteLine(tracked: TrackedPath, line: WriteLine | undefined): void {
    tracked.writeLine = line;
    (tracked.writeLineChanges ??= []).push({ checkpointRecords: this.checkpointRecords, line });
    this.written.add(tracked);
  }

  private noteCall(turn: number, toolCallId: string, tool: string | undefined, file: string): void {
    const calls = this.callsDuring.get(turn) ?? new Map<string, ToolCallWrites>();
    this.callsDuring.set(turn, calls);
    const call = calls.get(toolCallId) ?? { toolCallId, ...(tool !== undefined ? { tool } : {}), files: [] };
    calls.set(toolCallId, call);
    if (!call.files.includes(file)) call.files.push(file);
  }

  /**
   * The version a checkpoint holds for a path, or the path's first backup if
   * it was tracked later: a rewind puts a file first touched after the
   * checkpoint back as it was before the agent touched it.
   */
  versionAt(tracked: TrackedPath, checkpointIndex: number): PathVersion {
    // Versions are in checkpoint order; a rewind asks this of every path, so a long session is searched by halves.
    const { versions } = tracked;
    let low = 0;
    let high = versions.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (versions[middle]!.checkpointIndex <= checkpointIndex) low = middle;
      else high = middle - 1;
    }
    return versions[low]!;
  }

  /**
   * Files the turn of a checkpoint touched: first tracked in it, written by a
   * tracked tool during it, or found changed at the next checkpoint.
   */
  touchedDuring(checkpointIndex: number): string[] {
    const touched = new Set(this.writtenDuring.get(checkpointIndex));
    for (const tracked of this.paths.values()) {
      if (tracked.versions[0]!.checkpointIndex === checkpointIndex) touched.add(tracked.path);
      const next = tracked.versions.find((version) => version.checkpointIndex === checkpointIndex + 1);
      if (next !== undefined && !sameState(next.state, this.versionAt(tracked, checkpointIndex).state)) touched.add(tracked.path);
    }
    return [...touched].sort();
  }

  latestVersion(tracked: TrackedPath): PathVersion {
    return tracked.versions.at(-1)!;
  }

  /** Paths whose state the checkpoint records: those first tracked at or before it. */
  pathsRecordedAt(checkpointIndex: number): TrackedPath[] {
    return [...this.paths.values()].filter((tracked) => tracked.versions[0]!.checkpointIndex <= checkpointIndex);
  }

  /** The path's tracked entry with the version added; undefined for a path never acted on (`refusedPaths`). */
  private recordVersion(storedPath: string, checkpointIndex: number, state: FileState, observed: Observation | undefined): TrackedPath | undefined {
    const absolute = fromStoredPath(storedPath, this.root);
    let tracked = this.paths.get(absolute);
    if (tracked === undefined) {
      const refusal = !isConfined(absolute, { root: this.root, ...this.confinement }) ? 'outside-project' : isNameable(absolute) ? undefined : 'invalid-path';
      if (refusal !== undefined) {
        this.refusedPaths.set(path.normalize(absolute), refusal);
        return;
      }
      tracked = { path: absolute, storedPath, versions: [] };
      this.paths.set(absolute, tracked);
      this.directoriesOfPaths.add(path.dirname(absolute));
    }
    const last = tracked.versions.at(-1);
    // A refreshed checkpoint replaces its own earlier entry, but never the first backup:
    // earlier checkpoints still need the state from before the agent first touched the file.
    if (last !== undefined && tracked.versions.length > 1 && last.checkpointIndex === checkpointIndex) {
      last.state = state;
      last.observed = observed;
    } else {
      tracked.versions.push({ checkpointIndex, state, observed });
    }
    noteSeen(tracked, state, observed);
    return tracked;
  }
}

/** Longest name of one directory entry, in bytes (NAME_MAX on Linux and macOS). */
const maxNameBytes = 255;

/** Whether a file can have this path at all: no NUL byte, no name over `maxNameBytes` bytes. */
function isNameable(absolute: string): boolean {
  if (absolute.includes('\0')) return false;
  // The usual path is shorter than one name may be: nothing to split.
  if (absolute.length <= maxNameBytes / 3 || Buffer.byteLength(absolute) <= maxNameBytes) return true;
  return absolute.split(path.sep).every((name) => Buffer.byteLength(name) <= maxNameBytes);
}

/** Remembers content seen on disk together with its stat signature. */
export function noteSeen(tracked: TrackedPath, state: FileState, observed: Observation | undefined): void {
  if (state.kind === 'file' && observed !== undefined) tracked.lastSeen = { state, observed };
}

/** True when two states describe the same content and mode. */
/** The states a rewind wrote that no checkpoint holds, by stored path (see `RewindBeginRecord.plan`); undefined when none. */
export function writtenStates(begin: RewindBeginRecord): Map<string, FileState> | undefined {
  if (!begin.plan.some((entry) => entry.to !== undefined)) return undefined;
  return new Map(begin.plan.flatMap((entry) => (entry.to !== undefined ? [[entry.path, entry.to] as const] : [])));
}

export function sameState(a: FileState, b: FileState): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.sha256 === b.sha256 && a.mode === b.mode;
  return a.kind === 'absent';
}
