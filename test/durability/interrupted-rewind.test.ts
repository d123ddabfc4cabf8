import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { gcOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { CheckpointManager, encodeProjectKey, listSessions } from '../../src/index.js';
import { buildCli, runCli } from '../cli/helpers/built-cli.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';
import { bundledWorker } from './helpers/bundle.js';

/**
 * A rewind killed midway is rolled back by whichever session of the project opens next, not only by its own
 * session: the next agent run in a project usually starts a new session, and the files would otherwise stay half
 * rewound with no sign.
 */

const agent = { 'a.txt': 'a.txt: agent\n', 'b.txt': 'b.txt: agent\n', 'c.txt': 'c.txt: agent\n' };
const original = { 'a.txt': 'a.txt: original\n', 'b.txt': 'b.txt: original\n', 'c.txt': 'c.txt: original\n' };

function files(project: TempProject): Record<string, string> {
  return Object.fromEntries(Object.keys(original).map((name) => [name, project.read(name).toString()]));
}

/** Runs the worker until it stops in the middle of its rewind; resolves once it has. */
async function rewindStoppedMidway(project: TempProject, stop: 'kill' | 'hang') {
  for (const [name, content] of Object.entries(original)) project.write(name, content);
  const sessionId = newId();
  const first = newId();
  const child = spawn(process.execPath, [await bundledWorker('interrupted-rewind'), JSON.stringify({ root: project.root, store: project.store, sessionId, first, stop })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
  if (stop === 'kill') expect(await exited, output).toBe('SIGKILL');
  else await new Promise<void>((resolve) => child.stdout.on('data', () => output.includes('"stopped"') && resolve()));
  // Stopped before its second file: the first is rewound, the others are not.
  expect(files(project)).toEqual({ ...agent, 'a.txt': original['a.txt'] });
  return {
    sessionId,
    first,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('a rewind a crash interrupted', () => {
  it('is reported by listSessions, and rolled back by opening a new session of the project', async () => {
    const project = tempProject();
    const crashed = await rewindStoppedMidway(project, 'kill');
    const [listed] = await listSessions({ cwd: project.root, storeDir: project.store });
    expect(listed).toMatchObject({ sessionId: crashed.sessionId, interruptedRewind: { target: crashed.first } });

    const next = await project.open({ sessionId: newId() });
    expect(await next.interruptedRewinds()).toEqual([
      expect.objectContaining({ sessionId: crashed.sessionId, target: crashed.first, outcome: 'rolled-back', filesRestored: [project.file('a.txt')], filesLeftAlone: [] }),
    ]);
    expect(files(project)).toEqual(agent);
    expect((await listSessions({ cwd: project.root, storeDir: project.store })).find((session) => session.sessionId === crashed.sessionId)?.interruptedRewind).toBeUndefined();
    await next.close();

    // Found once: the next opener has nothing to do, and the crashed session rewinds as if nothing had happened.
    const later = await project.open({ sessionId: newId() });
    expect(await later.interruptedRewinds()).toEqual([]);
    const resumed = await project.open({ resume: crashed.sessionId });
    expect(await resumed.interruptedRewinds()).toEqual([]);
    const result = await resumed.rewindFiles(crashed.first);
    expect(result.filesChanged).toHaveLength(3);
    expect(files(project)).toEqual(original);
    await resumed.rewindFiles(result.undoCheckpointId!);
    expect(files(project)).toEqual(agent);
  });

  it('is shown by rewindable sessions, as a note and in --json, until it is rolled back', async () => {
    const project = tempProject();
    const crashed = await rewindStoppedMidway(project, 'kill');
    const cli = await buildCli();
    try {
      const plain = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store]);
      expect(plain.code).toBe(0);
      expect(plain.stderr).toContain(`note: session ${crashed.sessionId} has a rewind (to message ${crashed.first}) that was interrupted`);
      const json = sessionsOutputSchema.parse(JSON.parse((await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store, '--json'])).stdout));
      expect(json.sessions[0]!.interruptedRewind).toMatchObject({ target: crashed.first });

      await (await project.open({ sessionId: newId() })).close();
      const after = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store]);
      expect(after.stderr).toBe('');
    } finally {
      cli.remove();
    }
  });

  it('is rolled back by its own session too, which then reports it', async () => {
    const project = tempProject();
    const crashed = await rewindStoppedMidway(project, 'kill');
    const resumed = await project.open({ resume: crashed.sessionId });
    expect(await resumed.interruptedRewinds()).toEqual([expect.objectContaining({ sessionId: crashed.sessionId, outcome: 'rolled-back' })]);
    expect(files(project)).toEqual(agent);
    await resumed.close();
    expect(await (await project.open({ sessionId: newId() })).interruptedRewinds()).toEqual([]);
  });

  it('of a session a live process still holds is left to that process, and reported as in progress', async () => {
    const project = tempProject();
    const hanging = await rewindStoppedMidway(project, 'hang');
    try {
      const next = await CheckpointManager.open({ cwd: project.root, storeDir: project.store, sessionId: newId() });
      expect(await next.interruptedRewinds()).toEqual([expect.objectContaining({ sessionId: hanging.sessionId, target: hanging.first, outcome: 'in-progress' })]);
      expect(files(project)).toEqual({ ...agent, 'a.txt': original['a.txt'] });
      await next.close();
    } finally {
      await hanging.kill();
    }
    // Once its process is gone, the next opener rolls it back.
    const after = await project.open({ sessionId: newId() });
    expect(await after.interruptedRewinds()).toEqual([expect.objectContaining({ sessionId: hanging.sessionId, outcome: 'rolled-back' })]);
    expect(files(project)).toEqual(agent);
  });
});

describe('rewindable gc and the notes of rewinds in progress', () => {
  /** The note a rewinding session leaves where every session of its project looks (`<project key>.rewinding`). */
  const noteOf = (project: TempProject, sessionId: string) => path.join(project.store, 'projects', `${encodeProjectKey(project.root)}.rewinding`, `${sessionId}.jsonl`);

  it('gc --older-than 0 keeps the note of a rewind a live process is in the middle of, lists no note as a session, and the next session of the project rolls the rewind back once that process dies', async () => {
    const project = tempProject();
    const hanging = await rewindStoppedMidway(project, 'hang');
    const cli = await buildCli();
    try {
      const gc = await runCli(cli, ['gc', '--older-than', '0', '--yes', '--store', project.store, '--json']);
      const sessions = await runCli(cli, ['sessions', '--cwd', project.root, '--store', project.store, '--json']);

      expect(gc.code).toBe(0);
      expect(gcOutputSchema.parse(JSON.parse(gc.stdout))).toMatchObject({ sessionsRemoved: [], sessionsLocked: 1, sessionsKept: 1, leftAlone: [] });
      expect(sessionsOutputSchema.parse(JSON.parse(sessions.stdout)).sessions.map((session) => session.sessionId)).toEqual([hanging.sessionId]);
      expect(fs.existsSync(noteOf(project, hanging.sessionId))).toBe(true);
    } finally {
      cli.remove();
      await hanging.kill();
    }
    const next = await project.open({ sessionId: newId() });
    expect(await next.interruptedRewinds()).toEqual([expect.objectContaining({ sessionId: hanging.sessionId, outcome: 'rolled-back' })]);
    expect(files(project)).toEqual(agent);
  });

  it('gc removes the note of a session it removes, and reports only the session', async () => {
    const project = tempProject();
    const crashed = await rewindStoppedMidway(project, 'kill');
    const cli = await buildCli();
    try {
      const gc = await runCli(cli, ['gc', '--older-than', '0', '--yes', '--store', project.store, '--json']);

      expect(gcOutputSchema.parse(JSON.parse(gc.stdout))).toMatchObject({ sessionsRemoved: [{ projectKey: encodeProjectKey(project.root), sessionId: crashed.sessionId }], sessionsKept: 0 });
      expect(fs.existsSync(noteOf(project, crashed.sessionId))).toBe(false);
      expect(fs.existsSync(path.join(project.store, 'projects', encodeProjectKey(project.root), `${crashed.sessionId}.jsonl`))).toBe(false);
    } finally {
      cli.remove();
    }
  });
});
