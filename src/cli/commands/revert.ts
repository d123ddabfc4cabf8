import type { RevertConflictChoice } from '../../rewind/undo-on-top.js';
import { choiceValue, flagValue, type Command } from '../command.js';
import { UsageError } from '../exit-codes.js';
import { idsParagraph, projectOption, resolveCheckpoint, resolveTarget, withManager } from '../open-manager.js';
import { checkpointKind, pathOption, previewThenRewind, selectedPaths } from '../rewind-flow.js';

const conflictChoices = ['skip', 'markers', 'overwrite'] as const satisfies readonly RevertConflictChoice[];

export const revertCommand: Command = {
  name: 'revert',
  description:
    'Undoes the file changes of one turn, the one that began with the user message CHECKPOINT, and keeps every ' +
    'change made after it, as git revert does: each file the turn changed is put back as it was before the turn ' +
    'with the later changes merged in (a three-way merge). A file no later change touched simply goes back; a file ' +
    'the turn created is deleted. The turn ends at the next checkpoint; the latest turn ends at what the agent last wrote.\n\n' +
    `${idsParagraph}\n\n` +
    "A file whose later changes overlap the turn's (the same lines; or deleted since; created by the turn and edited since; " +
    'binary) conflicts. --on-conflict skip (the default) leaves it as it is and lists it with the conflicting lines; ' +
    'markers writes the merge with conflict markers (a conflict without lines is still left alone); overwrite puts back ' +
    'its version from before the turn, discarding the later changes.\n\n' +
    'It first shows what would change: per file the action, the lines added and removed, and whether it is merged or ' +
    'where it conflicts. Confirmation, --yes, --dry-run, the lock and the exit codes are as for rewind: with no terminal ' +
    'and no --yes it changes nothing and exits with 1; if every file that would change is left alone, it exits with 1. ' +
    'Each revert is undoable: it prints the id of an undo checkpoint to rewind to.',
  positionals: { optional: ['SESSION'], required: ['CHECKPOINT'] },
  options: {
    'dry-run': { type: 'boolean', short: 'n', description: 'Only show what would change (works while the session is open elsewhere).' },
    path: pathOption('Revert'),
    'on-conflict': {
      type: 'string',
      value: 'MODE',
      choices: conflictChoices,
      description: "A file whose later changes overlap the turn's: skip (default), markers or overwrite.",
    },
    yes: { type: 'boolean', short: 'y', description: 'Revert without asking for confirmation.' },
    cwd: projectOption,
  },
  examples: [
    'rewindable revert SESSION CHECKPOINT',
    'rewindable revert 5d3b 9f1e --dry-run',
    'rewindable revert 9f1e --on-conflict markers --yes',
    'rewindable revert 5d3b 9f1e --path src/parser.ts --yes --json',
  ],
  async run(invocation) {
    const [first, second] = invocation.positionals as [string, string | undefined];
    const dryRun = flagValue(invocation, 'dry-run');
    const yes = flagValue(invocation, 'yes');
    if (dryRun && yes) throw new UsageError('--dry-run and --yes contradict each other: pick one.', 'revert');
    const onConflict = choiceValue(invocation, 'on-conflict', conflictChoices) ?? 'skip';
    const target = await resolveTarget(invocation, second === undefined ? { checkpoint: first } : { session: first, checkpoint: second }, 'revert');
    return withManager(invocation, target, { readOnly: dryRun, command: 'revert' }, async (manager) => {
      const checkpointId = await resolveCheckpoint(manager, target.checkpoint, 'revert');
      const turn = `the turn of ${await checkpointKind(manager, checkpointId)} ${checkpointId}`;
      const paths = selectedPaths(invocation, manager.root);
      return previewThenRewind(invocation, manager.root, {
        sessionId: manager.sessionId,
        checkpointId,
        dryRun,
        yes,
        onConflict,
        wording: { verb: 'revert', past: 'reverted', subject: `A revert of ${turn}`, cannot: `cannot have ${turn} undone`, nothing: `no file holds a change of ${turn}`, done: `Reverted the file changes of ${turn}` },
        run: (preview) => manager.revertTurn(checkpointId, { dryRun: preview, onConflict, ...(paths !== undefined ? { paths } : {}) }),
      });
    });
  },
};
