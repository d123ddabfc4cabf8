import type { RewindConflictChoice } from '../../rewind/rewind-choice.js';
import { choiceValue, flagValue, stringValues, type Command } from '../command.js';
import { UsageError } from '../exit-codes.js';
import { plural } from '../format.js';
import { explainStaleHunk, hunkOption, selectedHunks } from '../hunk-option.js';
import { idsParagraph, projectOption, resolveCheckpoint, resolveTarget, withManager } from '../open-manager.js';
import { checkpointKind, pathOption, previewThenRewind, selectedPaths } from '../rewind-flow.js';

const conflictChoices = ['overwrite', 'skip', 'merge', 'markers'] as const satisfies readonly RewindConflictChoice[];

export const rewindCommand: Command = {
  name: 'rewind',
  description:
    'Rewinds every tracked file of the session to its state at CHECKPOINT (the id of a user message, or of an undo point): ' +
    'files the agent created are deleted, changed or deleted files are restored. Links, hard-linked files ' +
    'and files whose directory moved are left alone and listed.\n\n' +
    `${idsParagraph}\n\n` +
    'A file changed by someone other than the agent since the agent last wrote it is overwritten by default. ' +
    '--on-conflict skip leaves it alone; merge undoes only what the agent wrote since CHECKPOINT and keeps the other ' +
    'edit (a three-way merge; a file whose merge conflicts is left alone and listed with the conflicting lines); ' +
    'markers does the same but writes a conflicting merge with conflict markers.\n\n' +
    '--hunk ID (repeatable) rewinds only those hunks of the patch rewindable diff shows, by the ids it prints after their ' +
    '@@ lines: each is applied to its file as it is now. An id names the diff it came from: once its file changes, ' +
    'it is stale, and the rewind fails (exit 1) and changes nothing. --hunk takes no --path, nor --on-conflict merge or markers.\n\n' +
    'It first shows what would change. On a terminal it then asks for confirmation; with --yes it goes ahead ' +
    'without asking. When there is no terminal to ask on (a script, CI) and no --yes, it shows the preview, ' +
    'changes nothing and exits with 1. If nothing differs, nothing is written and it exits with 0; if the only ' +
    'files that differ are left alone, nothing is written and it exits with 1.\n\n' +
    'A real rewind needs the session for itself: it fails (exit 1) while another process, such as the agent, ' +
    'has the session open. Each rewind is undoable: it prints the id of an undo checkpoint to rewind to.',
  positionals: { optional: ['SESSION'], required: ['CHECKPOINT'] },
  options: {
    'dry-run': { type: 'boolean', short: 'n', description: 'Only show what would change (works while the session is open elsewhere).' },
    path: pathOption('Rewind'),
    hunk: hunkOption,
    'on-conflict': {
      type: 'string',
      value: 'MODE',
      choices: conflictChoices,
      description: 'A file changed since the agent last wrote it: overwrite (default), skip, merge or markers.',
    },
    yes: { type: 'boolean', short: 'y', description: 'Rewind without asking for confirmation.' },
    cwd: projectOption,
  },
  examples: [
    'rewindable rewind SESSION CHECKPOINT',
    'rewindable rewind 5d3b 9f1e --dry-run',
    "rewindable rewind 5d3b 9f1e --path src/parser.ts --path 'test/**'",
    'rewindable rewind 5d3b 9f1e --on-conflict merge',
    'rewindable rewind 5d3b 9f1e --hunk 76db366af71a-0 --hunk 76db366af71a-2',
    'rewindable rewind CHECKPOINT --yes --json',
  ],
  async run(invocation) {
    const [first, second] = invocation.positionals as [string, string | undefined];
    const dryRun = flagValue(invocation, 'dry-run');
    const yes = flagValue(invocation, 'yes');
    if (dryRun && yes) throw new UsageError('--dry-run and --yes contradict each other: pick one.', 'rewind');
    const onConflict = choiceValue(invocation, 'on-conflict', conflictChoices) ?? 'overwrite';
    const hunks = selectedHunks(invocation);
    if (hunks !== undefined && (onConflict === 'merge' || onConflict === 'markers')) {
      throw new UsageError(`--hunk and --on-conflict ${onConflict} cannot be combined: a hunk is applied to its file as it is now.`, 'rewind');
    }
    if (hunks !== undefined && stringValues(invocation, 'path').length > 0) throw new UsageError('--hunk and --path cannot be combined: a hunk id names its file.', 'rewind');
    const target = await resolveTarget(invocation, second === undefined ? { checkpoint: first } : { session: first, checkpoint: second }, 'rewind');
    return withManager(invocation, target, { readOnly: dryRun, command: 'rewind' }, async (manager) => {
      const checkpointId = await resolveCheckpoint(manager, target.checkpoint, 'rewind');
      const at = `${await checkpointKind(manager, checkpointId)} ${checkpointId}`;
      const paths = selectedPaths(invocation, manager.root);
      const chosen = hunks !== undefined ? { hunks } : paths !== undefined ? { paths } : {};
      const rewind = (preview: boolean) => manager.rewindFiles(checkpointId, { dryRun: preview, onConflict, ...chosen });
      const hunksCount = hunks !== undefined ? plural(hunks.length, 'hunk') : undefined;
      return previewThenRewind(invocation, manager.root, {
        sessionId: manager.sessionId,
        checkpointId,
        dryRun,
        yes,
        onConflict,
        wording: {
          verb: 'rewind',
          past: 'rewound',
          subject: hunksCount !== undefined ? `A rewind of ${hunksCount} to ${at}` : `A rewind to ${at}`,
          cannot: `cannot be put back as at ${at}`,
          nothing: `the files already match ${at}`,
          done: `${hunksCount ?? 'Files'} rewound to state at ${at}`,
        },
        run: hunks === undefined ? rewind : (preview) => explainStaleHunk(rewind(preview), `Run 'rewindable diff ${manager.sessionId} ${checkpointId}' again and pick from the ids it shows.`),
      });
    });
  },
};
