import { describe, expect, it } from 'vitest';
import { runWorker } from '../helpers/child.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * The writing threads of a rewind never keep a process alive: an agent's
 * command line or a harness ends when its own work is done, whether or not
 * the threads were started, sent jobs, or left idle.
 */

/** A session whose latest checkpoint holds a changed version ('b') of `count` files ('a' at the first checkpoint, returned). */
async function changedFiles(project: TempProject, count: number): Promise<{ sessionId: string; first: string }> {
  for (let index = 0; index < count; index += 1) project.write(`f${index}.txt`, 'a');
  const manager = await project.open();
  const first = await manager.checkpoint(newId());
  for (let index = 0; index < count; index += 1) {
    await manager.trackEdit(`f${index}.txt`);
    project.write(`f${index}.txt`, 'b');
  }
  await manager.checkpoint(newId());
  await manager.close();
  return { sessionId: manager.sessionId, first };
}

/** Runs `steps` in a child process and resolves to how it ended, or to 'still running' if it has not ended on its own well after its last step. */
async function endOf(project: TempProject, sessionId: string, steps: object[]) {
  const child = runWorker({ options: { cwd: project.root, storeDir: project.store, resume: sessionId, durability: 'none' }, steps: [...steps, { do: 'close' }] });
  await child.waitFor((line) => line.closed === true);
  const ended = await Promise.race([child.done, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
  if (ended === 'still running') child.child.kill('SIGKILL');
  return ended === 'still running' ? ended : { code: ended.code, rewound: ended.lines.find((line) => 'rewind' in line) };
}

describe.runIf(process.platform === 'linux')('a process that rewinds', () => {
  it('ends by itself when the writing threads were started for a rewind that then had nothing to write', async () => {
    const project = tempProject();
    // 256 files to restore by the log, so the threads start before the plan; put back by hand, so the plan finds nothing to do.
    const { sessionId, first } = await changedFiles(project, 256);
    for (let index = 0; index < 256; index += 1) project.write(`f${index}.txt`, 'a');
    const ended = await endOf(project, sessionId, [{ do: 'rewind', id: first }]);
    expect(ended).toMatchObject({ code: 0, rewound: { rewind: { canRewind: true, filesChanged: [] } } });
  }, 30_000);

  it('ends by itself when its first rewind wrote here and started the writing threads for the next one', async () => {
    const project = tempProject();
    const { sessionId, first } = await changedFiles(project, 40);
    // The pause lets the threads start (and warm up) after the rewind, before the session closes.
    const ended = await endOf(project, sessionId, [{ do: 'rewind', id: first }, { do: 'pause', ms: 500 }]);
    expect(ended).toMatchObject({ code: 0, rewound: { rewind: { canRewind: true } } });
    for (let index = 0; index < 40; index += 1) expect(project.read(`f${index}.txt`).toString()).toBe('a');
  }, 30_000);
});
