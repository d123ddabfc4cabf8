import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { startTimelineServer } from '../../ui/timeline-server.js';
import { flagValue, stringValue, type Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { enclosingProject } from '../find-session.js';

export const uiCommand: Command = {
  name: 'ui',
  description:
    "Serves a local web page of the project's sessions and prints its address: the sessions, newest first; a session's " +
    'timeline of user messages, checkpoints and undo points; what a rewind to a checkpoint would change, file by file, ' +
    'with diffs; and rewind and undo, after a confirmation. See docs/timeline.md.\n\n' +
    'The server listens on 127.0.0.1 only, and every request must carry the random token in the printed address. ' +
    'It opens a session for writing only for the length of one rewind, which fails with SESSION_LOCKED while another ' +
    'process (the running agent) has the session open. It runs until interrupted (Ctrl-C).',
  positionals: { required: [] },
  options: {
    cwd: { type: 'string', value: 'DIR', description: 'The project directory, or a directory in it (default: the current directory).' },
    port: { type: 'string', value: 'N', description: 'Port to listen on (default: a free one).' },
    open: { type: 'boolean', description: 'Open the page in the default browser.' },
  },
  examples: ['rewindable ui', 'rewindable ui --cwd ~/code/app --port 4317 --open'],
  async run(invocation) {
    if (invocation.json) throw new UsageError('ui serves a page until interrupted: --json does not apply.', 'ui');
    const start = path.resolve(invocation.terminal.cwd, stringValue(invocation, 'cwd') ?? '.');
    if (!fs.statSync(start, { throwIfNoEntry: false })?.isDirectory()) {
      throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The project directory ${start} does not exist or is not a directory. Pass an existing one with --cwd.`, {
        details: { path: start },
      });
    }
    const portText = stringValue(invocation, 'port');
    const port = portText === undefined ? 0 : Number(portText);
    if (!/^\d+$/.test(portText ?? '0') || port > 65535) throw new UsageError(`--port takes a port number from 0 to 65535, not ${JSON.stringify(portText)}.`, 'ui');
    // From a subdirectory, as git finds its repository: the nearest enclosing project with sessions.
    const cwd = (await enclosingProject(invocation.storeDir, start)) ?? start;
    const server = await startTimelineServer({ cwd, storeDir: invocation.storeDir, port });
    const { out } = invocation;
    out.line(`Timeline of ${cwd}: ${server.url}`);
    out.note('Press Ctrl-C to stop.');
    const opened = flagValue(invocation, 'open') ? openBrowser(server.url) : undefined;
    try {
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => resolve());
      });
      // A rewind under way finishes first, rather than leaving its files half rewound.
      await server.close();
    } finally {
      opened?.remove();
    }
    return ExitCode.success;
  },
};

/**
 * Opens the page with the platform's opener; the page works the same whether
 * or not one is found. The opener is handed a private file that redirects
 * to the page, not the address itself: a command line is readable by every
 * user of the machine (ps, /proc/PID/cmdline), and the address holds the
 * token. The file is readable by this user only, in a directory of its own,
 * and is removed when the server stops.
 */
function openBrowser(url: string): { remove(): void } {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-ui-'));
  fs.chmodSync(directory, 0o700);
  const file = path.join(directory, 'open-timeline.html');
  fs.writeFileSync(file, redirectPage(url), { mode: 0o600, flag: 'wx' });
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  const child = spawn(command, [file], { stdio: 'ignore', detached: true });
  child.on('error', () => {});
  child.unref();
  return { remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
}

function redirectPage(url: string): string {
  const escaped = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    '<!doctype html>',
    '<meta charset="utf-8">',
    '<meta name="referrer" content="no-referrer">',
    `<meta http-equiv="refresh" content="0;url=${escaped}">`,
    '<title>rewindable timeline</title>',
    `<p><a href="${escaped}">Open the timeline</a></p>`,
    '',
  ].join('\n');
}
