import { randomUUID } from 'node:crypto';
import { query, type SDKMessage, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { tempProject } from '../helpers/temp-project.js';
import { hookEnvironment } from './helpers/hook-runner.js';
import { bundledClaudeCode, claudeEnvironment, promptStream } from '../integrations/helpers/claude-environment.js';
import { scriptByPrompt, startFakeAnthropicApi, type ScriptedBlock } from '../integrations/helpers/fake-anthropic-api.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli?.remove());

const toolUse = (id: string, name: string, input: Record<string, unknown>): ScriptedBlock[] => [{ type: 'tool_use', id, name, input }];

function withoutDirectories(snapshot: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot).filter(([name]) => !name.endsWith('/')));
}

// Skipped only where the SDK ships no Claude Code binary for this platform: there is nothing to run the hooks.
describe.skipIf(bundledClaudeCode() === undefined)('Claude Code with the rewindable hooks installed in .claude/settings.json (offline, scripted model)', () => {
  it('rewindable rewind brings back what Edit and Bash (sed -i, rm, echo >) changed; Claude Code\'s own rewind only the Edit', async () => {
    const project = tempProject();
    project.write('notes.txt', 'Shopping list\r\n- apples\r\n- pears\r\n');
    project.write('src/app.ts', 'export const app = 1;\n');
    project.write('README.md', '# demo\n');
    project.write('bin/run.sh', '#!/bin/sh\necho run\n', 0o755);
    const file = (relative: string) => project.file(relative);
    const command = "sed -i 's/app = 1/app = 2/' src/app.ts && rm README.md && echo generated > gen.txt && chmod 644 bin/run.sh";
    const api = await startFakeAnthropicApi(
      scriptByPrompt({
        'HOOKS-TURN': [
          toolUse('toolu_r1', 'Read', { file_path: file('notes.txt') }),
          toolUse('toolu_e1', 'Edit', { file_path: file('notes.txt'), old_string: '- pears', new_string: '- plums' }),
          toolUse('toolu_b1', 'Bash', { command, description: 'Run the codemod' }),
        ],
      }),
    );
    cleanups.push(() => api.close());
    const claude = claudeEnvironment(api.url);
    cleanups.push(() => claude.remove());

    // The hooks, installed by the real CLI into the project's settings; the hooks run it with the same store.
    const installed = await runCli(cli, ['hooks', 'install', 'claude-code', '--project', project.root]);
    expect(installed.code).toBe(0);
    const initial = project.snapshot();
    const env = { ...claude.env, ...hookEnvironment(cli, project.store) };

    const prompts = promptStream();
    const prompt: SDKUserMessage = { type: 'user', message: { role: 'user', content: 'HOOKS-TURN: swap pears for plums and run the codemod' }, parent_tool_use_id: null, uuid: randomUUID() };
    const stderr: string[] = [];
    const conversation = query({
      prompt: prompts.messages(),
      options: {
        cwd: project.root,
        settingSources: ['project'],
        permissionMode: 'acceptEdits',
        allowedTools: ['Read', 'Edit', 'Bash'],
        enableFileCheckpointing: true,
        env,
        stderr: (line) => stderr.push(line),
      },
    });
    cleanups.push(() => conversation.close());
    prompts.push(prompt);
    let result: SDKMessage | undefined;
    let claudePreview: Awaited<ReturnType<typeof conversation.rewindFiles>> | undefined;
    let claudeRewind: Awaited<ReturnType<typeof conversation.rewindFiles>> | undefined;
    let afterClaudeRewind: Record<string, string> | undefined;
    const hookResponses: string[] = [];
    for await (const message of conversation) {
      if (message.type === 'system' && message.subtype === 'hook_response') hookResponses.push(JSON.stringify(message));
      if (message.type !== 'result') continue;
      result = message;
      // The turn ran: the Edit and the command changed the files.
      expect(project.read('notes.txt').toString()).toBe('Shopping list\r\n- apples\r\n- plums\r\n');
      expect(project.read('src/app.ts').toString()).toBe('export const app = 2;\n');
      expect(project.exists('README.md')).toBe(false);
      expect(project.read('gen.txt').toString()).toBe('generated\n');
      // Claude Code's own rewind to before the prompt, while the conversation is open.
      claudePreview = await conversation.rewindFiles(prompt.uuid!, { dryRun: true });
      claudeRewind = await conversation.rewindFiles(prompt.uuid!);
      afterClaudeRewind = project.snapshot();
      prompts.push(undefined);
    }
    expect(result?.type === 'result' && result.subtype).toBe('success');
    const sessionId = result?.type === 'result' ? result.session_id : '';

    // It restores the Edit, and knows nothing of what Bash did.
    expect(claudePreview).toMatchObject({ canRewind: true, filesChanged: [file('notes.txt')] });
    expect(claudeRewind).toEqual({ canRewind: true, skippedLinks: 0 });
    expect(afterClaudeRewind!['notes.txt']).toBe(initial['notes.txt']);
    for (const changedByBash of ['src/app.ts', 'README.md', 'gen.txt', 'bin/run.sh']) expect(afterClaudeRewind![changedByBash]).not.toBe(initial[changedByBash]);

    // The hooks' checkpoint is in the session of Claude's session id, with the prompt as its text.
    const listed = await runCli(cli, ['checkpoints', sessionId, '--json'], { env: { REWINDABLE_HOME: project.store } });
    const checkpoints = (JSON.parse(listed.stdout) as { checkpoints: Array<{ id: string; prompt?: string }> }).checkpoints;
    expect(checkpoints.map((checkpoint) => checkpoint.prompt)).toEqual(['HOOKS-TURN: swap pears for plums and run the codemod']);

    // Put the Edit back as the agent left it, then the real CLI rewinds everything: every byte and mode as before the prompt.
    project.write('notes.txt', 'Shopping list\r\n- apples\r\n- plums\r\n');
    const rewound = await runCli(cli, ['rewind', sessionId, checkpoints[0]!.id, '--yes'], { env: { REWINDABLE_HOME: project.store } });
    expect(rewound.code).toBe(0);
    expect(rewound.stdout).toMatch(/The rewind changed 5 files/);
    expect(withoutDirectories(project.snapshot())).toEqual(withoutDirectories(initial));
    expect(hookResponses.filter((response) => /rewindable could not/.test(response))).toEqual([]);
  });
});
