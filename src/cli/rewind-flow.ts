import path from 'node:path';
import type { CheckpointManager } from '../checkpoint-manager.js';
import { isInside } from '../paths.js';
import { readyOrThrow, type RewindFilesReady, type RewindFilesResult } from '../rewind/result.js';
import type { RewindConflictChoice } from '../rewind/rewind-choice.js';
import { stringValues, type Invocation, type OptionDefinition } from './command.js';
import { confirm } from './confirm.js';
import { ExitCode } from './exit-codes.js';
import { plural } from './format.js';
import { rewindOutputSchema, type RewindOutput } from './output-schemas.js';
import { printPlan, toOutput, type RewindReportFields, type RewindWording } from './rewind-report.js';

/**
 * What `rewind` and `revert` share: preview, confirmation, the run and its
 * report. Only the library call and the words differ.
 */
export interface RewindRequest {
  sessionId: string;
  checkpointId: string;
  dryRun: boolean;
  yes: boolean;
  onConflict: RewindConflictChoice;
  wording: RewindWording;
  /** `rewindFiles` or `revertTurn` with the command's options; `dryRun` previews. */
  run(dryRun: boolean): Promise<RewindFilesResult>;
}

/** Previews, asks (or not), rewinds, and reports; the exit code follows the table in docs/cli.md. */
export async function previewThenRewind(invocation: Invocation, root: string, request: RewindRequest): Promise<ExitCode> {
  const { out } = invocation;
  const { wording } = request;
  const preview = readyOrThrow(await request.run(true));
  const fields = { sessionId: request.sessionId, checkpointId: request.checkpointId, cwd: root };
  const report = (result: RewindFilesReady, extra: Omit<RewindReportFields, keyof typeof fields>) => toOutput({ ...fields, ...extra }, result);
  const print = (output: RewindOutput) => printPlan(invocation, output, wording, request.onConflict);

  const nothingToChange = preview.filesChanged.length === 0;
  if (request.dryRun || nothingToChange) {
    const because = request.dryRun ? 'dry-run' : preview.skipped.length > 0 ? 'all-left-alone' : 'nothing-to-change';
    const output = report(preview, { rewound: false, notRewoundBecause: because });
    if (invocation.json) out.json(rewindOutputSchema, output);
    else print(output);
    // Paths left alone do not become what was asked: that cannot happen, however little else differs.
    return because === 'all-left-alone' ? ExitCode.failure : ExitCode.success;
  }

  if (!request.yes) {
    const canAsk = !invocation.json && invocation.terminal.stdin.isTTY === true;
    const preamble = report(preview, { rewound: false, notRewoundBecause: 'confirmation-required' });
    if (!canAsk) {
      if (invocation.json) out.json(rewindOutputSchema, preamble);
      else print(preamble);
      const why = invocation.json ? '--json never asks for confirmation' : 'there is no terminal to confirm on';
      out.note(`Nothing was changed: ${why}. Run again with --yes to ${wording.verb}, or with --dry-run to only preview.`);
      return ExitCode.failure;
    }
    print(preamble);
    out.line();
    const verb = `${wording.verb[0]!.toUpperCase()}${wording.verb.slice(1)}`;
    if (!(await confirm(invocation.terminal, `${verb} ${plural(preamble.files.length, 'file')}? [y/N] `))) {
      out.note(`${verb} cancelled; nothing was changed.`);
      return ExitCode.failure;
    }
  }

  const result = readyOrThrow(await request.run(false));
  const output = report(result, { rewound: true, ...(result.undoCheckpointId !== undefined ? { undoCheckpointId: result.undoCheckpointId } : {}) });
  if (invocation.json) {
    out.json(rewindOutputSchema, output);
    return ExitCode.success;
  }
  out.line(wording.done);
  if (output.undoCheckpointId !== undefined) {
    out.line(`Undo checkpoint: ${output.undoCheckpointId}`);
    out.line(out.style.dim(`To undo: rewindable rewind ${request.sessionId} ${output.undoCheckpointId}`));
  }
  out.line();
  print(output);
  return ExitCode.success;
}

/** What the checkpoint is, as the human output names it. */
export async function checkpointKind(manager: CheckpointManager, checkpointId: string): Promise<'message' | 'undo point'> {
  const checkpoint = (await manager.listCheckpoints()).find((candidate) => candidate.id === checkpointId);
  return checkpoint?.reason === 'pre-rewind' ? 'undo point' : 'message';
}

/** `--path`, as `rewind` and `revert` take it. */
export function pathOption(verb: string): OptionDefinition {
  return {
    type: 'string',
    value: 'PATH',
    multiple: true,
    description: `${verb} only this tracked file, the tracked files under this directory, or those matching this glob (quote it); repeat for more. Every other file is left as it is.`,
  };
}

/**
 * The `--path` values as the shell user means them: a relative one from the
 * directory the command runs in when that is inside the project (as `diff`'s
 * FILE arguments), else from the project root. They are handed on relative
 * to the project root, so a glob stays a glob over the project's paths.
 */
export function selectedPaths(invocation: Invocation, root: string): string[] | undefined {
  const values = stringValues(invocation, 'path');
  if (values.length === 0) return undefined;
  const cwd = invocation.terminal.cwd;
  const base = cwd === root || isInside(cwd, root) ? path.relative(root, cwd) : '';
  return values.map((value) => (path.isAbsolute(value) ? value : path.join(base, value)));
}

/** A dry run reports a rewind that cannot happen as `{ canRewind: false }`; the CLI turns it back into the typed error. */
