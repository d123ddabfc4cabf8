import path from 'node:path';
import { surveySessions } from '../../session/list-sessions.js';
import { stringValue, type Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { enclosingProject } from '../find-session.js';
import { formatBytes, formatTable, formatTime, plural } from '../format.js';
import { sessionsOutputSchema, type SessionsOutput } from '../output-schemas.js';
import type { Output } from '../output.js';

export const sessionsCommand: Command = {
  name: 'sessions',
  description:
    'Lists the sessions recorded for a project directory, the most recently active first, ' +
    'with the number of checkpoints (user messages) and tracked files of each. A session whose log ' +
    'is damaged is listed as damaged, with the reason on stderr. From a subdirectory of a project, the nearest ' +
    'enclosing directory that is a project with sessions in the store is listed, as git finds its repository.',
  positionals: { required: [] },
  options: {
    cwd: { type: 'string', value: 'DIR', description: 'The project directory, or a directory in it (default: the current directory).' },
  },
  examples: ['rewindable sessions', 'rewindable sessions --cwd ~/code/app --json'],
  async run(invocation) {
    const start = path.resolve(invocation.terminal.cwd, stringValue(invocation, 'cwd') ?? '.');
    // From a subdirectory, as git finds its repository: the nearest enclosing project with sessions.
    const cwd = (await enclosingProject(invocation.storeDir, start)) ?? start;
    const survey = await surveySessions({ cwd, storeDir: invocation.storeDir });
    const output: SessionsOutput = {
      store: invocation.storeDir,
      cwd: survey.root,
      sessions: survey.sessions.map((session) => ({
        sessionId: session.sessionId,
        createdAt: session.createdAt,
        lastActivity: session.lastActivity,
        checkpoints: session.checkpoints,
        trackedFiles: session.trackedFiles,
        ...(session.bytes !== undefined ? { bytes: session.bytes } : {}),
        ...(session.damaged !== undefined ? { damaged: session.damaged } : {}),
        ...(session.interruptedRewind !== undefined ? { interruptedRewind: session.interruptedRewind } : {}),
      })),
    };
    const { out } = invocation;
    noteLeftOut(out, survey.ignored, output);
    if (invocation.json) {
      out.json(sessionsOutputSchema, output);
      return ExitCode.success;
    }
    if (output.sessions.length === 0) {
      out.line(`No sessions for ${output.cwd} in the store ${invocation.storeDir}.`);
      return ExitCode.success;
    }
    printTable(out, output);
    return ExitCode.success;
  },
};

function printTable(out: Output, output: SessionsOutput): void {
  const damaged = (session: SessionsOutput['sessions'][number]) => session.damaged !== undefined;
  out.line(`${out.style.bold(plural(output.sessions.length, 'session'))} of ${output.cwd}`);
  out.line();
  out.line(
    formatTable(
      ['SESSION', 'CHECKPOINTS', 'FILES', 'LAST ACTIVITY', 'SIZE'],
      output.sessions.map((session) => [
        session.sessionId,
        // A damaged log's counts are unknown, not zero.
        damaged(session) ? `damaged (${session.damaged!.code})` : String(session.checkpoints),
        damaged(session) ? '-' : String(session.trackedFiles),
        formatTime(session.lastActivity),
        session.bytes !== undefined ? formatBytes(session.bytes) : '',
      ]),
      out.style.bold,
      (row, column, text) => (column === 0 ? out.style.yellow(text) : column === 1 && damaged(output.sessions[row]!) ? out.style.red(text) : text),
    ),
  );
}

/** Notes on stderr (so --json stays one document) for what the listing cannot show in full. */
function noteLeftOut(out: Output, ignored: readonly string[], output: SessionsOutput): void {
  for (const name of ignored) {
    out.note(`note: ignored ${JSON.stringify(name)} in the store's folder of ${output.cwd}: a session's name is its UUID, so it is not a session.`);
  }
  for (const session of output.sessions) {
    if (session.damaged !== undefined) out.note(`note: session ${session.sessionId} is damaged: ${session.damaged.message}`);
    if (session.interruptedRewind !== undefined) {
      out.note(
        `note: session ${session.sessionId} has a rewind (to message ${session.interruptedRewind.target}) that was interrupted at ` +
          `${session.interruptedRewind.at}, leaving files half rewound; opening this session or any other session of the ` +
          `project for writing (a real rewindable rewind, or the agent's next run) rolls it back.`,
      );
    }
  }
}
