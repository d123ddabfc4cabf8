import { cleanup, type CleanupResult } from '../../store/cleanup.js';
import { flagValue, stringValue, type Command, type Invocation } from '../command.js';
import { confirm } from '../confirm.js';
import { parseDays } from '../duration.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { formatBytes, plural } from '../format.js';
import { gcOutputSchema, type GcOutput } from '../output-schemas.js';
import { createProgress } from '../progress.js';

export const gcCommand: Command = {
  name: 'gc',
  description:
    'Removes every session of the store (all projects) idle for longer than --older-than, then every backup ' +
    'no remaining session names. Sessions another process has open are kept, and so is a session written since ' +
    'it was found idle (each is checked again under its lock). A file that is not a rewindable session log is left ' +
    'alone and listed. Backups written or reused in the last hour are kept (a live session may be about to name them). ' +
    'Prints what was removed and the space freed.\n\n' +
    'It first shows which sessions it would remove. On a terminal it then asks for confirmation; with --yes it goes ' +
    'ahead without asking. When there is no terminal to ask on (a script, cron, CI) and no --yes, it shows the preview, ' +
    'removes nothing and exits with 1. --dry-run only shows the preview.',
  positionals: { required: [] },
  options: {
    'older-than': { type: 'string', value: 'AGE', description: 'Idle time after which a session is removed: 30d, 12h, 2w (default: 30d).' },
    'dry-run': { type: 'boolean', short: 'n', description: 'Only show what would be removed.' },
    yes: { type: 'boolean', short: 'y', description: 'Remove without asking for confirmation.' },
    progress: { type: 'boolean', description: 'Report progress on stderr even when it is not a terminal.' },
  },
  examples: ['rewindable gc', 'rewindable gc --dry-run', 'rewindable gc --older-than 7d --yes --json'],
  async run(invocation) {
    const olderThanDays = parseDays(stringValue(invocation, 'older-than') ?? '30d', '--older-than', 'gc');
    const dryRun = flagValue(invocation, 'dry-run');
    const yes = flagValue(invocation, 'yes');
    if (dryRun && yes) throw new UsageError('--dry-run and --yes contradict each other: pick one.', 'gc');
    const { out } = invocation;
    if (yes) return report(invocation, olderThanDays, await clean(invocation, olderThanDays, false), { removed: true });

    const preview = await clean(invocation, olderThanDays, true);
    if (dryRun) return report(invocation, olderThanDays, preview, { removed: false, notRemovedBecause: 'dry-run' });
    report(invocation, olderThanDays, preview, { removed: false, notRemovedBecause: 'confirmation-required' });
    // As for a rewind: a removal nobody confirmed does not happen, and the exit code says so.
    if (invocation.json || invocation.terminal.stdin.isTTY !== true) {
      const why = invocation.json ? '--json never asks for confirmation' : 'there is no terminal to confirm on';
      out.note(`Nothing was removed: ${why}. Run again with --yes to remove, or with --dry-run to only preview.`);
      return ExitCode.failure;
    }
    out.line();
    const question = `Remove ${plural(preview.sessionsRemoved.length, 'session')} and the backups no session needs? [y/N] `;
    if (!(await confirm(invocation.terminal, question))) {
      out.note('gc cancelled; nothing was removed.');
      return ExitCode.failure;
    }
    return report(invocation, olderThanDays, await clean(invocation, olderThanDays, false), { removed: true });
  },
};

function clean(invocation: Invocation, olderThanDays: number, dryRun: boolean): Promise<CleanupResult> {
  const progress = createProgress(invocation.terminal, flagValue(invocation, 'progress') || invocation.terminal.stderr.isTTY === true);
  return cleanup({
    storeDir: invocation.storeDir,
    olderThanDays,
    dryRun,
    onProgress: ({ phase, done, total }) =>
      progress.update(phase === 'sessions' ? `Checking sessions: project ${done}/${total}` : 'Removing backups no session needs: done'),
  }).finally(() => progress.done());
}

function report(invocation: Invocation, olderThanDays: number, result: CleanupResult, outcome: Pick<GcOutput, 'removed' | 'notRemovedBecause'>): ExitCode {
  const { out } = invocation;
  const output: GcOutput = {
    store: invocation.storeDir,
    olderThanDays,
    ...outcome,
    sessionsRemoved: result.sessionsRemoved.map((removed) => ({ projectKey: removed.projectKey, sessionId: removed.sessionId })),
    sessionsKept: result.sessionsKept,
    sessionsLocked: result.sessionsLocked,
    leftAlone: result.leftAlone.map((entry) => ({ projectKey: entry.projectKey, sessionId: entry.sessionId, reason: entry.reason })),
    blobsRemoved: result.blobsRemoved,
    bytesFreed: result.bytesFreed,
    ...(result.blobsKeptBecause !== undefined ? { blobsKeptBecause: result.blobsKeptBecause } : {}),
  };
  if (invocation.json) {
    out.json(gcOutputSchema, output);
    return ExitCode.success;
  }
  if (output.removed) {
    out.line(
      `Removed ${plural(output.sessionsRemoved.length, 'session')} idle for over ${formatAge(olderThanDays)} and ` +
        `${plural(output.blobsRemoved, 'shared backup')} no session needed: ${out.style.bold(`${formatBytes(output.bytesFreed)} freed`)}.`,
    );
  } else {
    out.line(
      `Would remove ${plural(output.sessionsRemoved.length, 'session')} idle for over ${formatAge(olderThanDays)} ` +
        `(${out.style.bold(formatBytes(output.bytesFreed))}), then the shared backups no session needs (counted only when removed)${output.sessionsRemoved.length > 0 ? ':' : '.'}`,
    );
    for (const session of output.sessionsRemoved) out.line(`  projects/${session.projectKey}/${session.sessionId}.jsonl`);
  }
  const inUse = output.sessionsLocked > 0 ? ` (${plural(output.sessionsLocked, 'idle session')} kept because a process has it open)` : '';
  out.line(`${output.removed ? 'Kept' : 'Would keep'} ${plural(output.sessionsKept, 'session')}${inUse}.`);
  if (output.leftAlone.length > 0) {
    out.line(out.style.yellow(`Left alone ${plural(output.leftAlone.length, 'file')} that ${output.leftAlone.length === 1 ? 'is' : 'are'} not a rewindable session:`));
    for (const entry of output.leftAlone) out.line(`  projects/${entry.projectKey}/${entry.sessionId}.jsonl: ${entry.reason}`);
  }
  if (output.blobsKeptBecause !== undefined) out.line(out.style.yellow(`No backup was removed: ${output.blobsKeptBecause}.`));
  return ExitCode.success;
}

function formatAge(days: number): string {
  if (days >= 1 && Number.isInteger(days)) return plural(days, 'day');
  return plural(Math.round(days * 24 * 100) / 100, 'hour');
}
