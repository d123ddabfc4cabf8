import path from 'node:path';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import { RewindableError } from '../../errors.js';
import { isInside } from '../../paths.js';
import type { RewindFilesReady, RewindFilesResult } from '../../rewind/result.js';
import { flagValue, stringValues, type Command, type Invocation } from '../command.js';
import { confirm } from '../confirm.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { displayPath, formatTable, plural } from '../format.js';
import { idsParagraph, projectOption, resolveCheckpoint, resolveTarget, withManager } from '../open-manager.js';
import { rewindOutputSchema, type RewindOutput } from '../output-schemas.js';

export const rewindCommand: Command = {
  name: 'rewind',
  description:
    'Rewinds every tracked file of the session to its state at CHECKPOINT (the id of a user message, or of an undo point): ' +
    'files the agent created are deleted, changed or deleted files are restored. Links, hard-linked files ' +
    'and files whose directory moved are left alone and listed.\n\n' +
    `${idsParagraph}\n\n` +
    'It first shows what would change. On a terminal it then asks for confirmation; with --yes it goes ahead ' +
    'without asking. When there is no terminal to ask on (a script, CI) and no --yes, it shows the preview, ' +
    'changes nothing and exits with 1. If nothing differs, nothing is written and it exits with 0; if the only ' +
    'files that differ are left alone, nothing is written and it exits with 1.\n\n' +
    'A real rewind needs the session for itself: it fails (exit 1) while another process, such as the agent, ' +
    'has the session open. Each rewind is undoable: it prints the id of an undo checkpoint to rewind to.',
  positionals: { optional: ['SESSION'], required: ['CHECKPOINT'] },
  options: {
    'dry-run': { type: 'boolean', short: 'n', description: 'Only show what would change (works while the session is open elsewhere).' },
    path: {
      type: 'string',
      value: 'PATH',
      multiple: true,
      description: 'Rewind only this tracked file, the tracked files under this directory, or those matching this glob (quote it); repeat for more. Every other file is left as it is.',
    },
    yes: { type: 'boolean', short: 'y', description: 'Rewind without asking for confirmation.' },
    cwd: projectOption,
  },
  examples: ['rewindable rewind SESSION CHECKPOINT', 'rewindable rewind 5d3b 9f1e --dry-run', "rewindable rewind 5d3b 9f1e --path src/parser.ts --path 'test/**'", 'rewindable rewind CHECKPOINT --yes --json'],
  async run(invocation) {
    const [first, second] = invocation.positionals as [string, string | undefined];
    const dryRun = flagValue(invocation, 'dry-run');
    const yes = flagValue(invocation, 'yes');
    if (dryRun && yes) throw new UsageError('--dry-run and --yes contradict each other: pick one.', 'rewind');
    const target = await resolveTarget(invocation, second === undefined ? { checkpoint: first } : { session: first, checkpoint: second }, 'rewind');
    return withManager(invocation, target, { readOnly: dryRun, command: 'rewind' }, async (manager) => {
      const checkpointId = await resolveCheckpoint(manager, target.checkpoint, 'rewind');
      const kind = (await manager.listCheckpoints()).find((checkpoint) => checkpoint.id === checkpointId)?.reason === 'pre-rewind' ? 'undo point' : 'message';
      const paths = selectedPaths(invocation, manager.root);
      return rewind(invocation, manager, { sessionId: manager.sessionId, checkpointId, kind, dryRun, yes, ...(paths !== undefined ? { paths } : {}) });
    });
  },
};

interface Request {
  sessionId: string;
  checkpointId: string;
  /** What the checkpoint is, as the human output names it. */
  kind: 'message' | 'undo point';
  dryRun: boolean;
  yes: boolean;
  /** `--path`: only these files (absolute, or globs relative to the project). */
  paths?: string[];
}

async function rewind(invocation: Invocation, manager: CheckpointManager, request: Request): Promise<ExitCode> {
  const { out } = invocation;
  const selection = request.paths !== undefined ? { paths: request.paths } : {};
  const preview = assertCanRewind(await manager.rewindFiles(request.checkpointId, { dryRun: true, ...selection }));
  const report = (result: RewindFilesReady, extra: Pick<RewindOutput, 'rewound' | 'notRewoundBecause' | 'undoCheckpointId'>) =>
    toOutput(request, manager.root, result, extra);
  const print = (output: RewindOutput, verb: 'would change' | 'changed') => printPlan(invocation, output, verb, request.kind);

  const nothingToChange = preview.filesChanged.length === 0;
  if (request.dryRun || nothingToChange) {
    const because = request.dryRun ? 'dry-run' : preview.skipped.length > 0 ? 'all-left-alone' : 'nothing-to-change';
    const output = report(preview, { rewound: false, notRewoundBecause: because });
    if (invocation.json) out.json(rewindOutputSchema, output);
    else print(output, 'would change');
    // Paths left alone are not as they were at the checkpoint: the rewind asked for cannot happen, however little else differs.
    return because === 'all-left-alone' ? ExitCode.failure : ExitCode.success;
  }

  if (!request.yes) {
    const canAsk = !invocation.json && invocation.terminal.stdin.isTTY === true;
    const preamble = report(preview, { rewound: false, notRewoundBecause: 'confirmation-required' });
    if (!canAsk) {
      if (invocation.json) out.json(rewindOutputSchema, preamble);
      else print(preamble, 'would change');
      const why = invocation.json ? '--json never asks for confirmation' : 'there is no terminal to confirm on';
      out.note(`Nothing was changed: ${why}. Run again with --yes to rewind, or with --dry-run to only preview.`);
      return ExitCode.failure;
    }
    print(preamble, 'would change');
    out.line();
    if (!(await confirm(invocation.terminal, `Rewind ${plural(preamble.files.length, 'file')}? [y/N] `))) {
      out.note('Rewind cancelled; nothing was changed.');
      return ExitCode.failure;
    }
  }

  const result = await manager.rewindFiles(request.checkpointId, selection);
  const output = report(result, { rewound: true, ...(result.undoCheckpointId !== undefined ? { undoCheckpointId: result.undoCheckpointId } : {}) });
  if (invocation.json) {
    out.json(rewindOutputSchema, output);
    return ExitCode.success;
  }
  out.line(`Files rewound to state at ${request.kind} ${request.checkpointId}`);
  if (output.undoCheckpointId !== undefined) {
    out.line(`Undo checkpoint: ${output.undoCheckpointId}`);
    out.line(out.style.dim(`To undo: rewindable rewind ${request.sessionId} ${output.undoCheckpointId}`));
  }
  out.line();
  print(output, 'changed');
  return ExitCode.success;
}

/**
 * The `--path` values as the shell user means them: a relative one from the
 * directory the command runs in when that is inside the project (as `diff`'s
 * FILE arguments), else from the project root. They are handed on relative
 * to the project root, so a glob stays a glob over the project's paths.
 */
function selectedPaths(invocation: Invocation, root: string): string[] | undefined {
  const values = stringValues(invocation, 'path');
  if (values.length === 0) return undefined;
  const cwd = invocation.terminal.cwd;
  const base = cwd === root || isInside(cwd, root) ? path.relative(root, cwd) : '';
  return values.map((value) => (path.isAbsolute(value) ? value : path.join(base, value)));
}

/** A dry run reports a rewind that cannot happen as `{ canRewind: false }`; the CLI turns it back into the typed error. */
function assertCanRewind(result: RewindFilesResult): RewindFilesReady {
  if (result.canRewind) return result;
  throw new RewindableError(result.errorCode, result.error);
}

function toOutput(request: Request, root: string, result: RewindFilesReady, extra: Pick<RewindOutput, 'rewound' | 'notRewoundBecause' | 'undoCheckpointId'>): RewindOutput {
  return {
    sessionId: request.sessionId,
    checkpointId: request.checkpointId,
    cwd: root,
    ...extra,
    files: result.files.map((file) => ({
      path: file.path,
      action: file.action,
      insertions: file.insertions,
      deletions: file.deletions,
      binary: file.binary,
      statsSkipped: file.statsSkipped,
      conflict: file.conflict,
    })),
    insertions: result.insertions,
    deletions: result.deletions,
    skipped: result.skipped.map((entry) => ({ path: entry.path, reason: entry.reason, message: entry.message })),
    skippedLinks: result.skippedLinks,
    conflicts: result.conflicts,
  };
}

/** The table of changes: the preview before a rewind and the report after it. */
function printPlan(invocation: Invocation, output: RewindOutput, verb: 'would change' | 'changed', kind: Request['kind']): void {
  const { out } = invocation;
  const style = out.style;
  if (output.files.length === 0 && output.skipped.length > 0) {
    const count = plural(output.skipped.length, 'tracked file');
    const dryRun = output.notRewoundBecause === 'dry-run';
    out.line(
      dryRun
        ? `A rewind would change nothing: ${count} cannot be put back as at ${kind} ${output.checkpointId} and would be left alone.`
        : `Nothing rewound: ${count} cannot be put back as at ${kind} ${output.checkpointId} and ${output.skipped.length === 1 ? 'was' : 'were'} left alone.`,
    );
  } else if (output.files.length === 0) {
    out.line(`Nothing to rewind: the files already match ${kind} ${output.checkpointId}.`);
  } else {
    const subject = verb === 'changed' ? 'The rewind changed' : `A rewind to ${kind} ${output.checkpointId} would change`;
    out.line(`${subject} ${style.bold(plural(output.files.length, 'file'))} (${style.green(`+${output.insertions}`)} ${style.red(`-${output.deletions}`)}):`);
    out.line();
    const notes = output.files.some((file) => file.conflict);
    out.line(
      formatTable(
        ['ACTION', 'LINES', 'FILE', ...(notes ? ['NOTE'] : [])],
        output.files.map((file) => [
          file.action,
          file.binary ? 'binary' : file.statsSkipped ? '?' : `+${file.insertions} -${file.deletions}`,
          displayPath(file.path, output.cwd),
          ...(notes ? [file.conflict ? 'changed since the agent last wrote it' : ''] : []),
        ]),
        style.bold,
        (row, column, text) => (column === 0 ? actionStyle(invocation, output.files[row]!.action)(text) : column === 3 ? style.yellow(text) : text),
      ),
    );
  }
  if (output.skipped.length > 0) {
    out.line();
    out.line(style.bold(`Left alone (${output.skipped.length}):`));
    for (const entry of output.skipped) out.line(`  ${entry.message}`);
  }
}

function actionStyle(invocation: Invocation, action: string): (text: string) => string {
  const style = invocation.out.style;
  if (action === 'delete') return style.red;
  if (action === 'recreate') return style.green;
  return style.cyan;
}
