import fs from 'node:fs';
import path from 'node:path';
import { listSessions } from '../../session/list-sessions.js';
import { stringValue, type Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { formatBytes, formatTable, formatTime, plural } from '../format.js';
import { sessionsOutputSchema, type SessionsOutput } from '../output-schemas.js';

export const sessionsCommand: Command = {
  name: 'sessions',
  summary: 'List the sessions of a project, newest first',
  description:
    'Lists the sessions recorded for a project directory, the most recently active first, ' +
    'with the number of checkpoints (user messages) and tracked files of each.',
  positionals: { required: [] },
  options: {
    cwd: { type: 'string', value: 'DIR', description: 'The project directory (default: the current directory).' },
  },
  examples: ['rewindable sessions', 'rewindable sessions --cwd ~/code/app --json'],
  async run(invocation) {
    const cwd = path.resolve(invocation.terminal.cwd, stringValue(invocation, 'cwd') ?? '.');
    const sessions = await listSessions({ cwd, storeDir: invocation.storeDir });
    const root = sessions[0]?.cwd ?? fs.realpathSync.native(cwd);
    const output: SessionsOutput = {
      store: invocation.storeDir,
      cwd: root,
      sessions: sessions.map((session) => ({
        sessionId: session.sessionId,
        createdAt: session.createdAt,
        lastActivity: session.lastActivity,
        checkpoints: session.checkpoints,
        trackedFiles: session.trackedFiles,
        ...(session.bytes !== undefined ? { bytes: session.bytes } : {}),
      })),
    };
    const { out } = invocation;
    if (invocation.json) {
      out.json(sessionsOutputSchema, output);
      return ExitCode.success;
    }
    if (output.sessions.length === 0) {
      out.line(`No sessions for ${root} in the store ${invocation.storeDir}.`);
      return ExitCode.success;
    }
    out.line(`${out.style.bold(plural(output.sessions.length, 'session'))} of ${root}`);
    out.line();
    out.line(
      formatTable(
        ['SESSION', 'CHECKPOINTS', 'FILES', 'LAST ACTIVITY', 'SIZE'],
        output.sessions.map((session) => [
          session.sessionId,
          String(session.checkpoints),
          String(session.trackedFiles),
          formatTime(session.lastActivity),
          session.bytes !== undefined ? formatBytes(session.bytes) : '',
        ]),
        out.style.bold,
        (_row, column, text) => (column === 0 ? out.style.yellow(text) : text),
      ),
    );
    return ExitCode.success;
  },
};
