import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointsOutputSchema } from '../../src/cli/output-schemas.js';
import { tempProject } from '../helpers/temp-project.js';
import { buildCli, runCli, type BuiltCli } from './helpers/built-cli.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const longPrompt = 'Rename every handler in the payments module so that each name says which provider it talks to';

/** Two recorded user messages (one of several lines, one long), then a rewind, which takes an undo point. */
async function promptedSession() {
  const project = tempProject();
  project.write('app.js', 'one\n');
  const manager = await project.open();
  const first = await manager.recordUserMessage({ role: 'user', content: '\n   Fix the login bug  \nIt fails when the password has a space.' });
  await manager.trackEdit('app.js');
  project.write('app.js', 'two\n');
  const second = await manager.recordUserMessage({ role: 'user', content: [{ type: 'text', text: longPrompt }] });
  await manager.trackEdit('app.js');
  project.write('app.js', 'three\n');
  const { undoCheckpointId } = await manager.rewindFiles(first.uuid);
  await manager.close();
  return { project, sessionId: manager.sessionId, first: first.uuid, second: second.uuid, undo: undoCheckpointId! };
}

describe('rewindable checkpoints shows prompts and undo points', () => {
  it("shows each checkpoint's prompt, its first line trimmed and shortened, and marks the undo point", async () => {
    const { project, sessionId, first, second, undo } = await promptedSession();

    const run = await runCli(cli, ['checkpoints', sessionId, '--store', project.store]);

    expect(run.code).toBe(0);
    const rows = run.stdout.split('\n').slice(2, 6);
    expect(rows[0]).toMatch(/^#\s+CHECKPOINT\s+TIME\s+KIND\s+PROMPT\s+FILES$/);
    expect(rows[1]).toMatch(new RegExp(`^1  ${first}  \\S+ \\S+  message     Fix the login bug\\s+app.js$`));
    expect(rows[2]).toMatch(new RegExp(`^2  ${second}  \\S+ \\S+  message     ${longPrompt.slice(0, 59)}…  app.js$`));
    expect(rows[3]).toMatch(new RegExp(`^3  ${undo}  \\S+ \\S+  undo point  \\(before a rewind\\)\\s+app.js$`));
  });

  it('--json gives each checkpoint its kind and prompt', async () => {
    const { project, sessionId, first, second, undo } = await promptedSession();

    const run = await runCli(cli, ['checkpoints', sessionId, '--store', project.store, '--json']);

    expect(checkpointsOutputSchema.parse(JSON.parse(run.stdout)).checkpoints.map(({ id, reason, kind, prompt }) => ({ id, reason, kind, prompt }))).toEqual([
      { id: first, reason: 'message', kind: 'message', prompt: 'Fix the login bug' },
      { id: second, reason: 'message', kind: 'message', prompt: longPrompt },
      { id: undo, reason: 'pre-rewind', kind: 'undo', prompt: undefined },
    ]);
  });

  it('a rewind to an undo point calls it an undo point, in its preview and its report', async () => {
    const { project, sessionId, undo } = await promptedSession();

    const preview = await runCli(cli, ['rewind', sessionId, undo.slice(0, 8), '--dry-run', '--store', project.store]);
    const real = await runCli(cli, ['rewind', undo, '--yes', '--store', project.store], { cwd: project.root });

    expect(preview.stdout.split('\n')[0]).toBe(`A rewind to undo point ${undo} would change 1 file (+1 -1):`);
    expect(real.code).toBe(0);
    expect(real.stdout.split('\n')[0]).toBe(`Files rewound to state at undo point ${undo}`);
    expect(project.snapshot()['app.js']).toBe(`644 ${Buffer.from('three\n').toString('base64')}`);
  });
});
