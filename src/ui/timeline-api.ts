import { createHash } from 'node:crypto';
import path from 'node:path';
import type { CheckpointManager, CheckpointSummary } from '../checkpoint-manager.js';
import { messageText } from '../conversation/transcript.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { assertUuid } from '../paths.js';
import type { RewindScope } from '../conversation/rewind-result.js';
import type { FileDiff } from '../diff/diff-files.js';
import { rewindReportLines } from './report-lines.js';
import { RequestRefused } from './request-guard.js';
import type { TimelineSessions } from './timeline-sessions.js';
import type { DiffResponse, PreviewResponse, RewindResponse, SessionsResponse, TimelineBranch, TimelineCheckpoint, TimelineResponse } from './timeline-types.js';

/**
 * The timeline server's endpoints, each a call or two of the public API.
 * Ids are checked to be UUIDs before anything opens, and a diff is only
 * made for a path the session tracks.
 */

const scopes: readonly RewindScope[] = ['files', 'conversation', 'both'];

export async function sessionsList(sessions: TimelineSessions): Promise<SessionsResponse> {
  return { cwd: sessions.location.cwd, sessions: await sessions.list() };
}

export async function sessionTimeline(sessions: TimelineSessions, sessionId: string): Promise<TimelineResponse> {
  const id = uuid(sessionId, 'session id');
  return sessions.read(id, async (manager) => {
    const [checkpoints, active, branchList] = await Promise.all([manager.listCheckpoints(), manager.getTranscript(), manager.listBranches()]);
    const onActive = new Set(active.map((entry) => entry.uuid));
    // Only the branches a conversation rewind or a fork left: the active one is the timeline itself.
    const others = branchList.filter((candidate) => !candidate.active);
    const chains = await Promise.all(others.map((branch) => manager.getTranscript({ leafUuid: branch.leafUuid })));
    const branches: TimelineBranch[] = others.map((branch, index) => ({
      ...branch,
      userMessages: chains[index]!.filter((entry) => entry.type === 'user').map((entry) => ({ uuid: entry.uuid, timestamp: entry.timestamp, ...textOf(entry.message) })),
    }));
    const touchedOf = new Map<string, string[]>();
    for (const chain of [active, ...chains]) for (const entry of chain) if (entry.files !== undefined) touchedOf.set(entry.uuid, entry.files);
    return {
      sessionId: manager.sessionId,
      cwd: manager.root,
      checkpoints: checkpoints.map((checkpoint): TimelineCheckpoint => {
        const touched = touchedOf.get(checkpoint.id);
        return {
          id: checkpoint.id,
          createdAt: checkpoint.createdAt,
          reason: checkpoint.reason,
          ...(checkpoint.prompt !== undefined ? { prompt: checkpoint.prompt } : {}),
          fileCount: checkpoint.files.length,
          ...(touched !== undefined ? { touched } : {}),
          // A session whose harness records no messages has one line of checkpoints: all of it is active.
          onActiveBranch: active.length === 0 || checkpoint.reason === 'pre-rewind' || onActive.has(checkpoint.id),
        };
      }),
      branches,
    };
  });
}

export async function checkpointPreview(sessions: TimelineSessions, sessionId: string, checkpointId: string): Promise<PreviewResponse> {
  const id = uuid(sessionId, 'session id');
  const target = uuid(checkpointId, 'checkpoint id');
  return sessions.read(id, (manager) => previewOf(manager, target));
}

/**
 * What a rewind to the checkpoint would do now, and its plan digest: the
 * same figures whether asked by the preview or checked again by the rewind.
 */
export async function previewOf(manager: CheckpointManager, target: string): Promise<PreviewResponse> {
  const diffs = await manager.diffFiles(target);
  const files = diffs.map((diff) => {
    if (diff.action === 'skip') return diff;
    // The hunks' ids only: a selection of hunks is made on the preview, their lines are in the file's diff.
    const { patch: _patch, hunks, ...rest } = diff;
    return hunks !== undefined ? { ...rest, hunkIds: hunks.map((hunk) => hunk.id) } : rest;
  });
  const changed = files.filter((file) => file.action !== 'skip');
  const checkpoint = (await manager.listCheckpoints()).find((candidate) => candidate.id === target);
  const active = await manager.getTranscript();
  const conversationRewindable = active.some((entry) => entry.uuid === target);
  return {
    sessionId: manager.sessionId,
    checkpointId: target,
    cwd: manager.root,
    kind: checkpoint?.reason === 'pre-rewind' ? 'undo point' : 'message',
    ...(checkpoint?.prompt !== undefined ? { prompt: checkpoint.prompt } : {}),
    conversationRewindable,
    files,
    counts: {
      files: changed.length,
      insertions: changed.reduce((sum, file) => sum + file.insertions, 0),
      deletions: changed.reduce((sum, file) => sum + file.deletions, 0),
      conflicts: changed.filter((file) => file.conflict).length,
      leftAlone: files.length - changed.length,
    },
    plan: planDigest(diffs, conversationRewindable, active.at(-1)?.uuid),
  };
}

/**
 * A digest of everything the confirmation stands for: per file its action,
 * counts, flags and patch (so an edit that keeps the line counts still
 * changes it), which files are left alone and why, and where the
 * conversation ends. Two previews with the same digest describe the same rewind.
 */
export function planDigest(diffs: readonly FileDiff[], conversationRewindable: boolean, leaf: string | undefined): string {
  const files = diffs.map((diff) =>
    diff.action === 'skip'
      ? [diff.path, diff.action, diff.reason]
      : [diff.path, diff.action, diff.insertions, diff.deletions, diff.conflict, diff.binary, diff.tooLarge, diff.tooComplex, diff.patch === undefined ? null : createHash('sha256').update(diff.patch).digest('hex')],
  );
  return createHash('sha256').update(JSON.stringify({ files, conversationRewindable, leaf: leaf ?? null })).digest('base64url');
}

export async function fileDiff(sessions: TimelineSessions, sessionId: string, checkpointId: string, filePath: string | null): Promise<DiffResponse> {
  const id = uuid(sessionId, 'session id');
  const target = uuid(checkpointId, 'checkpoint id');
  return sessions.read(id, async (manager) => {
    const tracked = trackedPath(await manager.listCheckpoints(), filePath);
    const [file] = await diffOne(manager, target, tracked);
    // Tracked, but the same now as at the checkpoint: a rewind leaves it alone, and there is no difference to show.
    return { sessionId: manager.sessionId, checkpointId: target, cwd: manager.root, path: tracked, file: file?.path === tracked ? file : null };
  });
}

export async function rewindTo(sessions: TimelineSessions, sessionId: string, body: unknown): Promise<RewindResponse> {
  const id = uuid(sessionId, 'session id');
  const fields = bodyFields(body);
  const target = uuid(fields.checkpointId, 'checkpoint id');
  const scope = scopeOf(fields.scope);
  const confirmed = fields.plan;
  if (typeof confirmed !== 'string' || confirmed === '') {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'A rewind carries the plan the user confirmed: send the "plan" of the checkpoint\'s preview.', { details: { option: 'plan' } });
  }
  return sessions.write(id, async (manager) => {
    // Checked with the session held for writing: the agent cannot add a turn between this check and the rewind.
    const now = await previewOf(manager, target);
    if (now.plan !== confirmed) {
      throw new RequestRefused({
        status: 409,
        code: 'PLAN_CHANGED',
        message: 'The files changed since the preview was shown: nothing was rewound. Look at the new preview and confirm again.',
      });
    }
    return rewound(manager, target, scope, now.kind);
  });
}

/** Undo a rewind: rewind the files to the undo point it took, as `rewindable rewind SESSION UNDO` does. */
export async function undoRewind(sessions: TimelineSessions, sessionId: string, body: unknown): Promise<RewindResponse> {
  const id = uuid(sessionId, 'session id');
  const target = uuid(bodyFields(body).undoCheckpointId, 'undo point id');
  return sessions.write(id, async (manager) => {
    const checkpoint = (await manager.listCheckpoints()).find((candidate) => candidate.id === target);
    // Only an undo point: a user message's checkpoint is rewound to after its preview is confirmed, never by undo.
    if (checkpoint !== undefined && checkpoint.reason !== 'pre-rewind') {
      throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${target} is a user message's checkpoint, not an undo point: undo takes the undoCheckpointId a rewind answered.`, {
        details: { option: 'undoCheckpointId' },
      });
    }
    return rewound(manager, target, 'files', 'undo point');
  });
}

async function rewound(manager: CheckpointManager, target: string, scope: RewindScope, kind: 'message' | 'undo point'): Promise<RewindResponse> {
  const result = await manager.rewind(target, { scope });
  return {
    status: result.status,
    report: rewindReportLines(result, { sessionId: manager.sessionId, checkpointId: target, kind, cwd: manager.root }),
    ...(result.files?.undoCheckpointId !== undefined ? { undoCheckpointId: result.files.undoCheckpointId } : {}),
    ...(result.conversation !== undefined ? { conversationLeaf: result.conversation.leafUuid } : {}),
  };
}

export function scopeOf(scope: unknown): RewindScope {
  if (scope === undefined) return 'files';
  if (typeof scope === 'string' && scopes.includes(scope as RewindScope)) return scope as RewindScope;
  throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Unknown rewind scope ${JSON.stringify(scope)}: use 'files', 'conversation' or 'both'.`, { details: { option: 'scope' } });
}

/**
 * One tracked file's diff. A file whose directory became a link out of the
 * project cannot be selected by path (the selection refuses a path that
 * leads outside, naming where it leads); the preview's whole plan then says
 * why a rewind leaves it alone, and nothing outside the project is named.
 */
async function diffOne(manager: CheckpointManager, target: string, tracked: string): Promise<FileDiff[]> {
  try {
    return await manager.diffFiles(target, { paths: [tracked] });
  } catch (error) {
    if (!RewindableError.hasCode(error, RewindableErrorCode.INVALID_PATH)) throw error;
    // No patches: only the reason a file is left alone is wanted here.
    const entry = (await manager.diffFiles(target, { maxPatchBytes: 0 })).find((diff) => diff.path === tracked);
    if (entry?.action === 'skip') return [entry];
    throw new RewindableError(RewindableErrorCode.INVALID_PATH, `${JSON.stringify(tracked)} cannot be diffed now: its path no longer leads to a file in the project.`, { details: { path: tracked } });
  }
}

export function uuid(value: unknown, what: string): string {
  assertUuid(value, what);
  return value.toLowerCase();
}

function textOf(message: unknown): { text?: string } {
  const text = messageText(message);
  return text !== undefined ? { text } : {};
}

/**
 * The path as one the session tracks, or an INVALID_PATH error: an absolute
 * path, exactly as the preview lists it (never a directory or a glob), that
 * some checkpoint of the session holds.
 */
export function trackedPath(checkpoints: readonly CheckpointSummary[], filePath: string | null): string {
  if (filePath !== null && path.isAbsolute(filePath) && path.normalize(filePath) === filePath) {
    for (const checkpoint of checkpoints) if (checkpoint.files.includes(filePath)) return filePath;
  }
  throw new RewindableError(RewindableErrorCode.INVALID_PATH, `${JSON.stringify(filePath ?? '')} is not a file this session tracks: pick a file from the checkpoint's preview.`, {
    details: { ...(filePath !== null ? { path: filePath } : {}) },
  });
}

export function bodyFields(body: unknown): Record<string, unknown> {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'The request body must be a JSON object such as {"checkpointId": "…"}.');
}
