import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Every example runs as a user would run it (`npx tsx examples/<name>.ts`),
 * importing `rewindable` by its package name (the built dist/), with the
 * default store pointed at a temporary directory.
 */
const repository = path.resolve(import.meta.dirname, '..');
let home: string;

beforeAll(() => {
  if (!fs.existsSync(path.join(repository, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-examples-'));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function runExample(name: string): string {
  const environment: NodeJS.ProcessEnv = { ...process.env, REWINDABLE_HOME: home, NO_COLOR: '1' };
  delete environment.ANTHROPIC_API_KEY; // the Claude example must not call the API from a test
  return execFileSync(process.execPath, ['--import', 'tsx', path.join('examples', `${name}.ts`)], { cwd: repository, env: environment, encoding: 'utf8', timeout: 60_000 });
}

describe('examples', () => {
  it('basic: previews and rewinds a tracked edit', () => {
    const output = runExample('basic');
    expect(output).toMatch(/would change \[ '.*notes\.txt' \] \+1 -1/);
    expect(output).toContain('first draft');
  });

  it('ai-sdk: an agent loop on the mock model, rewound', () => {
    expect(runExample('ai-sdk')).toContain('after rewind: - write the docs | agent.log exists: false');
  });

  it('openai-agents: an agent run on a scripted model, rewound', () => {
    expect(runExample('openai-agents')).toContain('after rewind: {"debug":false}');
  });

  it('langchain: an agent with the middleware, rewound', () => {
    expect(runExample('langchain')).toContain('after rewind: "# Demo\\n"');
  });

  it('claude-agent-sdk: explains what it needs without an API key', () => {
    expect(runExample('claude-agent-sdk')).toContain('Set ANTHROPIC_API_KEY to run this example against the Claude API.');
  });

  it('demo: the scripted session runs to the end and cleans up', () => {
    expect(runExample('demo')).toContain('Done. The demo project and its session were removed');
  });

  it('demo: without REWINDABLE_HOME it uses a temporary store, never ~/.rewindable', () => {
    const fakeHome = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-demo-home-'));
    try {
      const environment: NodeJS.ProcessEnv = { ...process.env, HOME: fakeHome, NO_COLOR: '1' };
      delete environment.REWINDABLE_HOME;
      const output = execFileSync(process.execPath, ['--import', 'tsx', path.join('examples', 'demo.ts')], { cwd: repository, env: environment, encoding: 'utf8', timeout: 60_000 });
      expect(output).toMatch(/store: +\S*rewindable-demo-store-\S+ \(temporary/);
      expect(fs.existsSync(path.join(fakeHome, '.rewindable'))).toBe(false);
    } finally {
      fs.rmSync(fakeHome, { recursive: true, force: true });
    }
  });

  it('demo --keep: every CLI command it prints runs, with the ids it printed', () => {
    const output = execFileSync(process.execPath, ['--import', 'tsx', path.join('examples', 'demo.ts'), '--keep'], { cwd: repository, env: { ...process.env, NO_COLOR: '1', REWINDABLE_HOME: '' }, encoding: 'utf8', timeout: 60_000 });
    const project = /^ {2}cd (\S+)$/m.exec(output)![1]!;
    const commands = [...output.matchAll(/^ {2}npx rewindable (.+)$/gm)].map((match) => match[1]!.split(' '));
    expect(commands.map((command) => command[2])).toEqual(['sessions', 'checkpoints', 'diff', 'rewind', 'revert']);
    const store = commands[0]![1]!;
    try {
      for (const command of commands) {
        const printed = execFileSync(process.execPath, [path.join(repository, 'dist/cli.js'), ...command], { cwd: project, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8' });
        expect(printed.length, command.join(' ')).toBeGreaterThan(0);
      }
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
      fs.rmSync(store, { recursive: true, force: true });
    }
  });
});
