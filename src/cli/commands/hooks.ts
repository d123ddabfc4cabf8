import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { choiceValue, flagValue, stringValue, type Command, type Invocation } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { formatTable, plural } from '../format.js';
import type { RunningServer } from '../../hooks/server/running-servers.js';

const scopes = ['project', 'local', 'user'] as const;
type Scope = (typeof scopes)[number];
const agents = ['claude-code'];

export const hooksCommand: Command = {
  name: 'hooks',
  description:
    'ACTION is install, uninstall, status or stop. install and uninstall take an AGENT, claude-code. install adds the rewindable hooks (UserPromptSubmit; PreToolUse of Write, Edit, ' +
    'MultiEdit, NotebookEdit and Bash; PostToolUse and PostToolUseFailure of Bash) to Claude Code\'s settings, beside the hooks already there: ' +
    'other keys and hooks are kept, a second install changes nothing, and a file that is not a JSON object is left alone with an error. ' +
    'uninstall takes out only the rewindable hooks. --scope project writes .claude/settings.json of the project (--project, else the current ' +
    'directory), local .claude/settings.local.json (not meant for version control), user ~/.claude/settings.json ($CLAUDE_CONFIG_DIR when set). ' +
    '--print only prints the hooks as JSON. The hooks run COMMAND hook; COMMAND defaults to this Node and this rewindable, by absolute path. ' +
    'status lists the resident hook servers of this user (one per project, started by the first hook call; see docs/hooks.md): project, pid, ' +
    'idle time. stop stops the server of the project (--project, else the current directory), or every one with --all; the next hook call starts a new one.',
  positionals: { required: ['ACTION'], repeated: 'AGENT' },
  options: {
    scope: { type: 'string', value: 'SCOPE', choices: scopes, description: 'Which settings file: project (default), local or user.' },
    project: { type: 'string', value: 'DIR', description: 'The project whose .claude/ to write (default: the current directory).' },
    command: { type: 'string', value: 'COMMAND', description: 'How the hooks run rewindable, e.g. "npx --no-install rewindable" (default: this Node and this rewindable, by absolute path).' },
    print: { type: 'boolean', description: 'Print the hooks as JSON instead of writing a settings file.' },
    all: { type: 'boolean', description: 'stop: every hook server of this user.' },
  },
  examples: [
    'rewindable hooks install claude-code',
    'rewindable hooks install claude-code --scope user',
    'rewindable hooks install claude-code --print',
    'rewindable hooks uninstall claude-code',
    'rewindable hooks status',
    'rewindable hooks stop --all',
  ],
  async run(invocation) {
    const [action, agent, extra] = invocation.positionals as [string, string | undefined, string | undefined];
    if (action === 'status' || action === 'stop') {
      if (agent !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(agent)}: hooks ${action} takes no AGENT.`, 'hooks');
      return action === 'status' ? await status(invocation) : await stop(invocation);
    }
    if (action !== 'install' && action !== 'uninstall') throw new UsageError(`Unknown action ${JSON.stringify(action)}: use install, uninstall, status or stop.`, 'hooks');
    if (agent === undefined) throw new UsageError(`hooks ${action} needs an AGENT: claude-code.`, 'hooks');
    if (extra !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(extra)}.`, 'hooks');
    if (!agents.includes(agent)) throw new UsageError(`Unknown agent ${JSON.stringify(agent)}: hooks are installed for ${agents.join(', ')} (for other agents see docs/hooks.md).`, 'hooks');
    const { changeSettings, claudeCodeHooks } = await import('../../hooks/claude-settings.js');
    const command = `${stringValue(invocation, 'command') ?? defaultCommand()} hook`;
    const { out } = invocation;
    if (flagValue(invocation, 'print')) {
      if (action !== 'install') throw new UsageError('--print shows the hooks install would add; use it with install.', 'hooks');
      out.line(JSON.stringify({ hooks: claudeCodeHooks(command) }, null, 2));
      return ExitCode.success;
    }
    const scope = choiceValue(invocation, 'scope', scopes) ?? 'project';
    const change = changeSettings(settingsFile(invocation, scope), command, action);
    if (invocation.json) {
      out.line(JSON.stringify({ action, agent, scope, file: change.file, changed: change.changed, command }, null, 2));
      return ExitCode.success;
    }
    if (action === 'install') out.line(change.changed ? `Installed the rewindable hooks in ${change.file}.` : `The rewindable hooks were already installed in ${change.file}.`);
    else out.line(change.changed ? `Removed the rewindable hooks from ${change.file}.` : `No rewindable hooks to remove in ${change.file}.`);
    return ExitCode.success;
  },
};

/** `hooks status`: the running hook servers. */
async function status(invocation: Invocation): Promise<ExitCode> {
  const { runningServers } = await import('../../hooks/server/running-servers.js');
  const { servers, refused } = await runningServers(invocation.terminal.env);
  const { out } = invocation;
  if (invocation.json) {
    out.line(JSON.stringify({ servers: servers.map(describe), ...(refused !== undefined ? { refused } : {}) }, null, 2));
    return ExitCode.success;
  }
  if (refused !== undefined) out.note(`No hook server can run: ${refused}. Hooks run in their own process.`);
  if (servers.length === 0) {
    out.line('No hook servers are running.');
    return ExitCode.success;
  }
  out.line(out.style.bold(plural(servers.length, 'hook server')));
  out.line();
  out.line(
    formatTable(
      ['PROJECT', 'PID', 'IDLE', 'EVENTS', 'FIRST SCANS', 'STORE'],
      servers.map((server) => [server.target.project, String(server.pid), `${Math.round(server.idleMs / 1000)} s`, String(server.events), firstScans(server), server.target.storeDir]),
      out.style.bold,
    ),
  );
  return ExitCode.success;
}

/** `hooks stop`: the server of one project, or every one. */
async function stop(invocation: Invocation): Promise<ExitCode> {
  const { runningServers, stopServer } = await import('../../hooks/server/running-servers.js');
  const all = flagValue(invocation, 'all');
  const given = stringValue(invocation, 'project');
  if (all && given !== undefined) throw new UsageError('Give --project or --all, not both.', 'hooks');
  const project = path.resolve(invocation.terminal.cwd, given ?? '.');
  const real = realPathOf(project);
  const { servers } = await runningServers(invocation.terminal.env);
  const chosen = servers.filter((server) => all || server.target.projectReal === real || server.target.project === project);
  const stopped = [];
  for (const server of chosen) if (await stopServer(server)) stopped.push(server);
  const { out } = invocation;
  if (invocation.json) {
    out.line(JSON.stringify({ stopped: stopped.map(describe) }, null, 2));
    return ExitCode.success;
  }
  if (chosen.length === 0) out.line(all ? 'No hook servers are running.' : `No hook server is running for ${project}.`);
  else out.line(`Stopped ${plural(stopped.length, 'hook server')}${stopped.length < chosen.length ? ` (${chosen.length - stopped.length} did not exit within 10 s)` : ''}.`);
  return stopped.length < chosen.length ? ExitCode.failure : ExitCode.success;
}

type ListedServer = Pick<RunningServer, 'pid' | 'target' | 'idleMs' | 'events' | 'startedAt' | 'earlyScans'>;

function describe(server: ListedServer) {
  const earlyScans = { completed: server.earlyScans?.completed ?? 0, stopped: server.earlyScans?.stopped ?? 0 };
  return { project: server.target.project, pid: server.pid, idleSeconds: Math.round(server.idleMs / 1000), events: server.events, earlyScans, store: server.target.storeDir, extraRoots: server.target.extraRoots, startedAt: server.startedAt };
}

/** Sessions' first scans run ahead of their first Bash hook: done, and how often one gave way to another event. */
function firstScans(server: ListedServer): string {
  const { completed, stopped } = describe(server).earlyScans;
  return stopped === 0 ? `${completed} done` : `${completed} done, ${stopped} stopped`;
}

function realPathOf(directory: string): string {
  try {
    return fs.realpathSync.native(directory);
  } catch {
    return directory;
  }
}

function settingsFile(invocation: Invocation, scope: Scope): string {
  const { env, cwd } = invocation.terminal;
  if (scope === 'user') {
    const configDirectory = env.CLAUDE_CONFIG_DIR !== undefined && env.CLAUDE_CONFIG_DIR !== '' ? env.CLAUDE_CONFIG_DIR : path.join(env.HOME ?? os.homedir(), '.claude');
    return path.join(path.resolve(cwd, configDirectory), 'settings.json');
  }
  const project = path.resolve(cwd, stringValue(invocation, 'project') ?? '.');
  return path.join(project, '.claude', scope === 'local' ? 'settings.local.json' : 'settings.json');
}

/** This Node and this rewindable's bin, quoted for the shell Claude Code runs hooks with. */
function defaultCommand(): string {
  const cli = process.argv[1] !== undefined ? path.resolve(process.argv[1]) : fileURLToPath(new URL('./cli.js', import.meta.url));
  return `${shellQuote(process.execPath)} ${shellQuote(cli)}`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
