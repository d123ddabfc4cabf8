import { createHash } from 'node:crypto';
import type { CheckpointManager } from '../checkpoint-manager.js';
import { plural } from '../cli/format.js';
import { explainStaleHunk } from '../cli/hunk-option.js';
import type { RewindWording } from '../cli/rewind-report.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { readyOrThrow, type RewindFilesReady, type RewindFilesResult } from '../rewind/result.js';
import type { RewindConflictChoice } from '../rewind/rewind-choice.js';
import type { RevertConflictChoice } from '../rewind/undo-on-top.js';
import { parseHunkId } from '../text/patch-hunks.js';
import { planReportLines } from './report-lines.js';
import { RequestRefused } from './request-guard.js';
import { planDigest, trackedPath, uuid } from './timeline-api.js';
import type { TimelineSessions } from './timeline-sessions.js';
import type { PlanFile, PlanPreviewResponse, RewindResponse } from './timeline-types.js';

/**
 * The selective endpoints: a rewind of some files or some hunks
 * (`rewindFiles(id, { paths | hunks })`) and a revert of one turn
 * (`revertTurn`). Each takes `dryRun: true` for its preview, whose plan
 * digest the real run must send back, as a whole rewind does.
 */

/** Which files or hunks a selective rewind takes back: exactly one of the two. */
export type Selection = { paths: string[] } | { hunks: string[] };

const revertChoices: readonly RevertConflictChoice[] = ['skip', 'markers', 'overwrite'];

/** A selection of files or hunks named more times than this is refused: a page never sends more than every tracked file. */
const maxSelected = 100_000;

/**
 * A rewind of the chosen files or hunks (`{ checkpointId, paths | hunks, dryRun?, plan? }`): a dry run answers
 * its plan, a real run must send that plan back. Files only, conflicts overwritten as a whole rewind's are.
 */
export async function rewindSelected(sessions: TimelineSessions, sessionId: string, fields: Record<string, unknown>): Promise<PlanPreviewResponse | RewindResponse> {
  const id = uuid(sessionId, 'session id');
  const target = uuid(fields.checkpointId, 'checkpoint id');
  if (fields.scope !== undefined && fields.scope !== 'files') {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'A rewind of some files or hunks rewinds files only: send no "scope", or "files".', { details: { option: 'scope' } });
  }
  const dryRun = dryRunOf(fields);
  const confirmed = dryRun ? undefined : confirmedPlan(fields, 'rewind');
  const run = async (manager: CheckpointManager, preview: boolean) => {
    const selection = selectionOf(fields, await manager.listCheckpoints());
    const options = { onConflict: 'overwrite', ...selection } as const;
    const result = await explainStaleHunk(manager.rewindFiles(target, { dryRun: preview, ...options }), 'Open the diff again and choose from the hunks it shows.');
    const hunks = 'hunks' in selection ? selection.hunks.length : undefined;
    const at = `${await kindOf(manager, target)} ${target}`;
    const wording: RewindWording = {
      verb: 'rewind',
      past: 'rewound',
      subject: hunks !== undefined ? `A rewind of ${plural(hunks, 'hunk')} to ${at}` : `A rewind to ${at}`,
      cannot: `cannot be put back as at ${at}`,
      nothing: `the files already match ${at}`,
      done: `${hunks !== undefined ? plural(hunks, 'hunk') : 'Files'} rewound to state at ${at}`,
    };
    // The patches of the chosen files, so an edit that keeps the line counts still changes the plan; a hunk id names its patch already.
    const patches = 'paths' in selection ? planDigest(await manager.diffFiles(target, { paths: selection.paths }), false, undefined) : null;
    return { result, wording, onConflict: options.onConflict as RewindConflictChoice, stamp: { selection, patches } };
  };
  return dryRun ? sessions.read(id, (manager) => planned(manager, target, run)) : sessions.write(id, (manager) => confirmedRun(manager, target, confirmed!, run));
}

/** A revert of one turn (`{ checkpointId, onConflict?, dryRun?, plan? }`), the same way. */
export async function revertTurn(sessions: TimelineSessions, sessionId: string, fields: Record<string, unknown>): Promise<PlanPreviewResponse | RewindResponse> {
  const id = uuid(sessionId, 'session id');
  const target = uuid(fields.checkpointId, 'checkpoint id');
  const onConflict = fields.onConflict ?? 'skip';
  if (typeof onConflict !== 'string' || !revertChoices.includes(onConflict as RevertConflictChoice)) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Unknown onConflict ${JSON.stringify(onConflict)} for a revert: use 'skip', 'markers' or 'overwrite'.`, { details: { option: 'onConflict' } });
  }
  const choice = onConflict as RevertConflictChoice;
  const dryRun = dryRunOf(fields);
  const confirmed = dryRun ? undefined : confirmedPlan(fields, 'revert');
  const run = async (manager: CheckpointManager, preview: boolean) => {
    const turn = `the turn of ${await kindOf(manager, target)} ${target}`;
    const result = await manager.revertTurn(target, { dryRun: preview, onConflict: choice });
    const wording: RewindWording = { verb: 'revert', past: 'reverted', subject: `A revert of ${turn}`, cannot: `cannot have ${turn} undone`, nothing: `no file holds a change of ${turn}`, done: `Reverted the file changes of ${turn}` };
    return { result, wording, onConflict: choice, stamp: { onConflict: choice } };
  };
  return dryRun ? sessions.read(id, (manager) => planned(manager, target, run)) : sessions.write(id, (manager) => confirmedRun(manager, target, confirmed!, run));
}

interface Run {
  result: RewindFilesResult;
  wording: RewindWording;
  onConflict: RewindConflictChoice;
  /** What else the plan stands for besides the dry run's figures. */
  stamp: unknown;
}

async function planned(manager: CheckpointManager, target: string, run: (manager: CheckpointManager, preview: boolean) => Promise<Run>): Promise<PlanPreviewResponse> {
  const { result, wording, onConflict, stamp } = await run(manager, true);
  const ready = readyOrThrow(result);
  const files = ready.files.map(
    (file): PlanFile => ({
      path: file.path,
      action: file.action,
      insertions: file.insertions,
      deletions: file.deletions,
      binary: file.binary,
      conflict: file.conflict,
      ...(file.merge !== undefined ? { merge: { status: file.merge.status, conflicts: file.merge.conflicts.map((conflict) => ({ current: conflict.current })) } } : {}),
    }),
  );
  const reverting = wording.verb === 'revert';
  return {
    sessionId: manager.sessionId,
    checkpointId: target,
    cwd: manager.root,
    kind: await kindOf(manager, target),
    files,
    leftAlone: ready.skipped.map((entry) => ({ path: entry.path, reason: entry.reason, message: entry.message })),
    counts: {
      files: files.length,
      insertions: ready.insertions,
      deletions: ready.deletions,
      conflicts: files.filter((file) => (reverting ? file.merge?.status === 'conflict' : file.conflict)).length,
      leftAlone: ready.skipped.length,
    },
    report: planReportLines(ready, { sessionId: manager.sessionId, checkpointId: target, cwd: manager.root }, wording, onConflict),
    plan: resultDigest(ready, stamp),
  };
}

/** The real run, once the dry run made with the session held for writing still has the plan the user confirmed. */
async function confirmedRun(manager: CheckpointManager, target: string, confirmed: string, run: (manager: CheckpointManager, preview: boolean) => Promise<Run>): Promise<RewindResponse> {
  const now = await planned(manager, target, run);
  if (now.plan !== confirmed) {
    throw new RequestRefused({
      status: 409,
      code: 'PLAN_CHANGED',
      message: 'The files changed since the preview was shown: nothing was changed. Look at the new preview and confirm again.',
    });
  }
  const { result, wording, onConflict } = await run(manager, false);
  const ready = readyOrThrow(result);
  return {
    status: ready.skipped.length > 0 ? 'partial' : 'success',
    report: planReportLines(ready, { sessionId: manager.sessionId, checkpointId: target, cwd: manager.root }, wording, onConflict),
    ...(ready.undoCheckpointId !== undefined ? { undoCheckpointId: ready.undoCheckpointId } : {}),
  };
}

/**
 * A digest of a dry run: per file its action, counts, flags and merge (with
 * a hash of the merged text), the files left alone and why, and the stamp
 * (the selection or the conflict choice).
 */
function resultDigest(result: RewindFilesReady, stamp: unknown): string {
  const hash = (text: string | undefined) => (text === undefined ? null : createHash('sha256').update(text).digest('hex'));
  const files = result.files.map((file) => [file.path, file.action, file.insertions, file.deletions, file.binary, file.statsSkipped, file.conflict, file.merge?.status ?? null, file.merge?.conflicts ?? null, hash(file.merge?.preview)]);
  const skipped = result.skipped.map((entry) => [entry.path, entry.reason, entry.merge?.conflicts ?? null]);
  return createHash('sha256').update(JSON.stringify({ files, skipped, stamp })).digest('base64url');
}

/**
 * The files or hunks a rewind takes back, checked before anything is
 * written: paths the session tracks, exactly as the preview lists them, or
 * hunk ids of the shape `diffFiles` gives (`76db366af71a-0`). Never both: a
 * hunk id names its file already.
 */
export function selectionOf(fields: Record<string, unknown>, checkpoints: Parameters<typeof trackedPath>[0]): Selection {
  const { paths, hunks } = fields;
  if ((paths === undefined) === (hunks === undefined)) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'A rewind of some files sends "paths", one of some hunks sends "hunks": exactly one of the two.', { details: { option: paths === undefined ? 'paths' : 'hunks' } });
  }
  const option = paths !== undefined ? 'paths' : 'hunks';
  const list = paths ?? hunks;
  if (!Array.isArray(list) || list.length === 0 || list.length > maxSelected || !list.every((entry) => typeof entry === 'string')) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `"${option}" must be a non-empty array of strings (at most ${maxSelected}).`, { details: { option } });
  }
  const unique = [...new Set(list as string[])];
  if (option === 'paths') return { paths: unique.map((entry) => trackedPath(checkpoints, entry)) };
  const malformed = unique.find((entry) => parseHunkId(entry) === undefined);
  if (malformed !== undefined) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${JSON.stringify(malformed)} is not a hunk id: take them from the file's diff (such as 76db366af71a-0).`, { details: { option: 'hunks' } });
  }
  return { hunks: unique };
}

function dryRunOf(fields: Record<string, unknown>): boolean {
  if (fields.dryRun === undefined || typeof fields.dryRun === 'boolean') return fields.dryRun === true;
  throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, '"dryRun" must be true or false.', { details: { option: 'dryRun' } });
}

function confirmedPlan(fields: Record<string, unknown>, verb: string): string {
  const plan = fields.plan;
  if (typeof plan === 'string' && plan !== '') return plan;
  throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `A ${verb} carries the plan the user confirmed: send the "plan" of its dry run.`, { details: { option: 'plan' } });
}

async function kindOf(manager: CheckpointManager, target: string): Promise<'message' | 'undo point'> {
  const checkpoint = (await manager.listCheckpoints()).find((candidate) => candidate.id === target);
  return checkpoint?.reason === 'pre-rewind' ? 'undo point' : 'message';
}

