import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { choiceValue, flagValue, stringValue, type Command, type Invocation } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';

const scopes = ['project', 'local', 'user'] as const;
type Scope = (typeof scopes)[number];
const agents = ['claude-code'];

export const hooksCommand: Command = {
  name: 'hooks',
  description:
    'ACTION is install or uninstall; AGENT is claude-code. install adds the rewindable hooks (UserPromptSubmit; PreToolUse of Write, Edit, ' +
    'MultiEdit, NotebookEdit and Bash; PostToolUse and PostToolUseFailure of Bash) to Claude Code\'s settings, beside the hooks already there: ' +
    'other keys and hooks are kept, a second install changes nothing, and a file that is not a JSON object is left alone with an error. ' +
    'uninstall takes out only the rewindable hooks. --scope project writes .claude/settings.json of the project (--project, else the current ' +
    'directory), local .claude/settings.local.json (not meant for version control), user ~/.claude/settings.json ($CLAUDE_CONFIG_DIR when set). ' +
    '--print only prints the hooks as JSON. The hooks run COMMAND hook; COMMAND defaults to this Node and this rewindable, by absolute path.',
  positionals: { required: ['ACTION', 'AGENT'] },
  options: {
    scope: { type: 'string', value: 'SCOPE', choices: scopes, description: 'Which settings file: project (default), local or user.' },
    project: { type: 'string', value: 'DIR', description: 'The project whose .claude/ to write (default: the current directory).' },
    command: { type: 'string', value: 'COMMAND', description: 'How the hooks run rewindable, e.g. "npx --no-install rewindable" (default: this Node and this rewindable, by absolute path).' },
    print: { type: 'boolean', description: 'Print the hooks as JSON instead of writing a settings file.' },
  },
  examples: ['rewindable hooks install claude-code', 'rewindable hooks install claude-code --scope user', 'rewindable hooks install claude-code --print', 'rewindable hooks uninstall claude-code'],
  async run(invocation) {
    const [action, agent] = invocation.positionals as [string, string];
    if (action !== 'install' && action !== 'uninstall') throw new UsageError(`Unknown action ${JSON.stringify(action)}: use install or uninstall.`, 'hooks');
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
