import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, type BuiltCli } from './cli/helpers/built-cli.js';
import { agentSession, events, rewindable, runHook, shell } from './hooks/helpers/hook-runner.js';
import { connectMcp } from './mcp/helpers/mcp-client.js';
import { tempProject } from './helpers/temp-project.js';

/**
 * The README's sections for other languages and agents show code that is not
 * TypeScript (readme-examples.test.ts runs those blocks): each is run here,
 * with the built CLI where the README says `npx rewindable`.
 */
const repository = path.resolve(import.meta.dirname, '..');
const readme = fs.readFileSync(path.join(repository, 'README.md'), 'utf8');

/** The first fenced block of `language` in the README section headed `heading`. */
function blockIn(heading: string, language: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  expect(start, `README section "${heading}"`).toBeGreaterThan(0);
  const section = readme.slice(start + 1, readme.indexOf('\n## ', start + 1));
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section);
  expect(match, `a ${language} block in "${heading}"`).not.toBeNull();
  return match![1]!;
}

/** The shell lines of a block, each split into words, comments dropped. */
const commandsOf = (block: string): string[][] =>
  block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '')
    .map((line) => line.split(/\s+/));

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli?.remove());

describe('README: other languages and agents', () => {
  it('From Python: the snippet is examples/python/README-snippet.py, which the Python client test runs', () => {
    expect(blockIn('From Python', 'python')).toBe(fs.readFileSync(path.join(repository, 'examples/python/README-snippet.py'), 'utf8'));
  });

  it('As an MCP server: the command registered with Claude Code serves the session, its prompts included', async () => {
    const [line] = commandsOf(blockIn('As an MCP server', 'sh'));
    const server = line!.slice(line!.indexOf('--') + 1);
    expect(server.slice(0, 7)).toEqual(['npx', '-y', '-p', 'rewindable', '-p', '@modelcontextprotocol/sdk', 'rewindable']);
    const project = tempProject();
    project.write('app.ts', 'export const app = 0;\n');
    const manager = await project.open();
    await manager.recordUserMessage({ role: 'user', content: 'Make app.ts export 1' });
    await manager.tools.write({ file_path: 'app.ts', content: 'export const app = 1;\n' });
    await manager.close();
    // Claude Code starts the server in the project directory; --cwd and --store say where that and the store are here.
    const connection = await connectMcp(cli, { cwd: project.root, store: project.store });
    try {
      expect(server.slice(7)).toEqual(['mcp']);
      const listed = await connection.client.callTool({ name: 'list_checkpoints', arguments: {} });
      expect(JSON.stringify(listed.structuredContent)).toContain('Make app.ts export 1');
    } finally {
      await connection.close();
    }
  });

  it("With Claude Code's hooks: install, a prompt and a Bash command, checkpoints, rewind", async () => {
    const commands = commandsOf(blockIn("With Claude Code's hooks", 'sh'));
    for (const command of commands) expect(command.slice(0, 2)).toEqual(['npx', 'rewindable']);
    const [install, checkpoints, rewind] = commands.map((command) => command.slice(2));
    const project = tempProject();
    project.write('notes.txt', 'keep me\n');

    const installed = await rewindable(cli, project.store, install!, project.root);
    expect(installed.code, installed.stderr).toBe(0);
    const settings = JSON.parse(fs.readFileSync(path.join(project.root, '.claude/settings.json'), 'utf8')) as { hooks: Record<string, unknown> };
    expect(Object.keys(settings.hooks)).toEqual(expect.arrayContaining(['UserPromptSubmit', 'PreToolUse', 'PostToolUse']));

    // What Claude Code then does at a prompt and around a Bash command.
    const agent = agentSession(project.root);
    expect((await runHook(cli, project.store, events.prompt(agent, 'Clean up the notes'))).code).toBe(0);
    const bash = { command: 'rm notes.txt' };
    expect((await runHook(cli, project.store, events.preTool(agent, 'Bash', bash, 'toolu_1'))).code).toBe(0);
    await shell(project.root, 'rm notes.txt');
    expect((await runHook(cli, project.store, events.postTool(agent, 'Bash', bash, 'toolu_1'))).code).toBe(0);

    const withSession = (words: string[], ids: Record<string, string>) => words.map((word) => ids[word] ?? word);
    const listed = await rewindable(cli, project.store, [...withSession(checkpoints!, { SESSION: agent.sessionId }), '--json'], project.root);
    expect(listed.code, listed.stderr).toBe(0);
    const [checkpoint] = (JSON.parse(listed.stdout) as { checkpoints: Array<{ id: string; prompt?: string }> }).checkpoints;
    expect(checkpoint!.prompt).toBe('Clean up the notes');
    const rewound = await rewindable(cli, project.store, withSession(rewind!, { SESSION: agent.sessionId, CHECKPOINT: checkpoint!.id }), project.root);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(project.read('notes.txt').toString()).toBe('keep me\n');
  });
});
