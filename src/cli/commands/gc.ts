import { cleanup } from '../../store/cleanup.js';
import { flagValue, stringValue, type Command } from '../command.js';
import { parseDays } from '../duration.js';
import { ExitCode } from '../exit-codes.js';
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
    'Prints what was removed and the space freed.',
  positionals: { required: [] },
  options: {
    'older-than': { type: 'string', value: 'AGE', description: 'Idle time after which a session is removed: 30d, 12h, 2w (default: 30d).' },
    progress: { type: 'boolean', description: 'Report progress on stderr even when it is not a terminal.' },
  },
  examples: ['rewindable gc', 'rewindable gc --older-than 7d --json'],
  async run(invocation) {
    const olderThanDays = parseDays(stringValue(invocation, 'older-than') ?? '30d', '--older-than', 'gc');
    const progress = createProgress(invocation.terminal, flagValue(invocation, 'progress') || invocation.terminal.stderr.isTTY === true);
    const result = await cleanup({
      storeDir: invocation.storeDir,
      olderThanDays,
      onProgress: ({ phase, done, total }) =>
        progress.update(phase === 'sessions' ? `Checking sessions: project ${done}/${total}` : 'Removing backups no session needs: done'),
    }).finally(() => progress.done());
    const output: GcOutput = {
      store: invocation.storeDir,
      olderThanDays,
      sessionsRemoved: result.sessionsRemoved.map((removed) => ({ projectKey: removed.projectKey, sessionId: removed.sessionId })),
      sessionsKept: result.sessionsKept,
      sessionsLocked: result.sessionsLocked,
      leftAlone: result.leftAlone.map((entry) => ({ projectKey: entry.projectKey, sessionId: entry.sessionId, reason: entry.reason })),
      blobsRemoved: result.blobsRemoved,
      bytesFreed: result.bytesFreed,
      ...(result.blobsKeptBecause !== undefined ? { blobsKeptBecause: result.blobsKeptBecause } : {}),
    };
    const { out } = invocation;
    if (invocation.json) {
      out.json(gcOutputSchema, output);
      return ExitCode.success;
    }
    out.line(
      `Removed ${plural(output.sessionsRemoved.length, 'session')} idle for over ${formatAge(olderThanDays)} and ` +
        `${plural(output.blobsRemoved, 'shared backup')} no session needed: ${out.style.bold(`${formatBytes(output.bytesFreed)} freed`)}.`,
    );
    const inUse = output.sessionsLocked > 0 ? ` (${plural(output.sessionsLocked, 'idle session')} kept because a process has it open)` : '';
    out.line(`Kept ${plural(output.sessionsKept, 'session')}${inUse}.`);
    if (output.leftAlone.length > 0) {
      out.line(out.style.yellow(`Left alone ${plural(output.leftAlone.length, 'file')} that ${output.leftAlone.length === 1 ? 'is' : 'are'} not a rewindable session:`));
      for (const entry of output.leftAlone) out.line(`  projects/${entry.projectKey}/${entry.sessionId}.jsonl: ${entry.reason}`);
    }
    if (output.blobsKeptBecause !== undefined) out.line(out.style.yellow(`No backup was removed: ${output.blobsKeptBecause}.`));
    return ExitCode.success;
  },
};

function formatAge(days: number): string {
  if (days >= 1 && Number.isInteger(days)) return plural(days, 'day');
  return plural(Math.round(days * 24 * 100) / 100, 'hour');
}
