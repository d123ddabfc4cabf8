import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';
import { buildServer, startServer, type BuiltServer, type ServerProcess } from './helpers/server-process.js';

/**
 * A client that disappears in the middle of a rewind: its stdin closes, or
 * the server gets SIGTERM (or SIGKILL). The rewind finishes or is rolled
 * back, never left half done, and the session's lock is free afterwards.
 */

const fileCount = 1000;
let built: BuiltServer;

beforeAll(async () => {
  built = await buildServer();
});
afterAll(() => built.remove());

const names = Array.from({ length: fileCount }, (_, index) => `src/module-${String(index).padStart(4, '0')}.ts`);
const old = (index: number) => `export const value = 'old ${index}';\n`;
const agent = (index: number) => `export const value = 'agent ${index}';\n`;

/** A session, recorded in this process and closed, whose one turn rewrote every file. */
async function recordedSession(project: TempProject): Promise<{ sessionId: string; message: string }> {
  names.forEach((name, index) => project.write(name, old(index)));
  const manager = await project.open();
  const message = newId();
  await manager.checkpoint(message);
  for (const name of names) await manager.trackEdit(name);
  names.forEach((name, index) => project.write(name, agent(index)));
  await manager.close();
  return { sessionId: manager.sessionId, message };
}

/** How many files hold their content from before the turn, and how many the agent's. */
function census(project: TempProject): { old: number; agent: number } {
  let counts = { old: 0, agent: 0 };
  names.forEach((name, index) => {
    const text = fs.readFileSync(project.file(name), 'utf8');
    if (text === old(index)) counts = { ...counts, old: counts.old + 1 };
    else if (text === agent(index)) counts = { ...counts, agent: counts.agent + 1 };
  });
  return counts;
}

/** Starts a real rewind of every file over the wire and resolves once the first file on disk is rewound. */
async function rewindUnderway(project: TempProject, server: ServerProcess, session: { sessionId: string; message: string }): Promise<void> {
  const { handle } = await server.call<{ handle: string }>('open', { cwd: project.root, store: project.store, session: { resume: session.sessionId }, durability: 'full' });
  server.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'the-rewind', method: 'rewindFiles', params: { handle, userMessageId: session.message } })}\n`);
  while (census(project).old === 0) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('a client that disappears mid-rewind', () => {
  it.each([
    ['its stdin closes', (server: ServerProcess) => server.child.stdin.end()],
    ['the server gets SIGTERM', (server: ServerProcess) => server.child.kill('SIGTERM')],
  ])('%s: the rewind finishes, every file is old, the server exits 0 and the lock is free', async (_name, disappear) => {
    const project = tempProject();
    const session = await recordedSession(project);
    const server = startServer(built);

    await rewindUnderway(project, server, session);
    disappear(server);

    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(census(project)).toEqual({ old: fileCount, agent: 0 });
    const reopened = await project.open({ session: { resume: session.sessionId } });
    expect(await reopened.interruptedRewinds()).toEqual([]);
  });

  it('the server is killed (SIGKILL): the next open rolls the rewind back or finds it done, so the files are all old or all new', async () => {
    const project = tempProject();
    const session = await recordedSession(project);
    const server = startServer(built);

    await rewindUnderway(project, server, session);
    server.child.kill('SIGKILL');
    await server.exited;

    // A lock left by a dead process is reclaimed by the next opener.
    const reopened = await project.open({ session: { resume: session.sessionId } });
    await reopened.interruptedRewinds();
    expect([{ old: fileCount, agent: 0 }, { old: 0, agent: fileCount }]).toContainEqual(census(project));
  });
});
