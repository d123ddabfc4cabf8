import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { encodeProjectKey } from '../../src/index.js';
import { checkpointsOutputSchema, rewindOutputSchema, sessionsOutputSchema } from '../../src/mcp/output-schemas.js';
import { buildCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { connectMcp, errorOf, textOf, type McpConnection } from './helpers/mcp-client.js';
import { promptedSession } from './helpers/prompted-session.js';
import { newId, tempProject } from '../helpers/temp-project.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const connections: McpConnection[] = [];
const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (connections.length > 0) await connections.pop()!.close();
  while (servers.length > 0) await servers.pop()!();
});

async function connect(cwd: string, store: string): Promise<McpConnection> {
  const connection = await connectMcp(cli, { cwd, store });
  connections.push(connection);
  return connection;
}

async function call(connection: McpConnection, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await connection.client.callTool({ name, arguments: args })) as CallToolResult;
}

describe('rewindable mcp at its seams', () => {
  it('two servers rewinding one session at once: each rewind either runs whole or fails with SESSION_LOCKED; the log stays readable', async () => {
    const { project, first, atFirst } = await promptedSession();
    const one = await connect(project.root, project.store);
    const two = await connect(project.root, project.store);
    await call(one, 'preview_rewind', { checkpointId: first });
    await call(two, 'preview_rewind', { checkpointId: first });

    const results = await Promise.all([call(one, 'rewind_files', { checkpointId: first }), call(two, 'rewind_files', { checkpointId: first })]);

    const failures = results.filter((result) => result.isError === true).map((result) => errorOf(result)?.code);
    expect(failures.every((code) => code === 'SESSION_LOCKED')).toBe(true);
    expect(failures.length).toBeLessThan(2);
    expect(project.snapshot()).toEqual(atFirst);
    const undoPoints = checkpointsOutputSchema.parse((await call(one, 'list_checkpoints')).structuredContent).checkpoints.filter((checkpoint) => checkpoint.kind === 'undo');
    expect(undoPoints).toHaveLength(2 - failures.length);
  });

  it('calls of one connection sent together are run one after another, never locking each other out', async () => {
    const { project, first, second, atFirst } = await promptedSession();
    const connection = await connect(project.root, project.store);
    await call(connection, 'preview_rewind', { checkpointId: first });
    await call(connection, 'preview_rewind', { checkpointId: second });

    const [toFirst, toSecond] = await Promise.all([call(connection, 'rewind_files', { checkpointId: first }), call(connection, 'rewind_files', { checkpointId: second })]);

    // The first ran; the second, run after it, would no longer do what its preview showed.
    expect(toFirst.isError).toBeUndefined();
    expect(errorOf(toSecond)?.code).toBe('PREVIEW_STALE');
    expect(project.snapshot()).toEqual(atFirst);
  });

  it('paths outside the project, and paths that name no tracked file, are tool errors; nothing is written', async () => {
    const { project, first, atEnd } = await promptedSession();
    const connection = await connect(project.root, project.store);

    const outside = await call(connection, 'preview_rewind', { checkpointId: first, paths: ['../outside/secret.txt'] });
    const untracked = await call(connection, 'preview_rewind', { checkpointId: first, paths: ['no/such/file.ts'] });
    const empty = await call(connection, 'preview_rewind', { checkpointId: first, paths: [] });

    expect(errorOf(outside)?.code).toMatch(/^(PATH_OUTSIDE_PROJECT|INVALID_PATH)$/);
    expect(errorOf(untracked)?.code).toBe('INVALID_PATH');
    expect(empty.isError).toBe(true);
    expect(errorOf(await call(connection, 'rewind_files', { checkpointId: first, paths: ['../outside/secret.txt'] }))?.code).toBe('PREVIEW_REQUIRED');
    expect(project.snapshot()).toEqual(atEnd);
  });

  it('started in a subdirectory, it serves the enclosing project, as git finds its repository', async () => {
    const { project, sessionId } = await promptedSession();
    const connection = await connect(project.file('src'), project.store);

    const listed = sessionsOutputSchema.parse((await call(connection, 'list_sessions')).structuredContent);
    expect(listed).toMatchObject({ cwd: project.root, sessions: [{ sessionId }] });
    expect(checkpointsOutputSchema.parse((await call(connection, 'list_checkpoints')).structuredContent)).toMatchObject({ sessionId, cwd: project.root });
  });

  it('a line of garbage on stdin is passed over, and the next request is still answered', async () => {
    const { project } = await promptedSession();
    const server = rawServer(project.root, project.store);

    server.write('this is not json\n{"jsonrpc":"2.0","id":\n');
    server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

    expect(await server.answer(1)).toMatchObject({ result: { serverInfo: { name: 'rewindable' } } });
    server.end();
    expect(await server.exited).toBe(0);
  });

  it('a rewind of 250 files is reported in full totals but lists 200, so a client never gets a result too large to show', async () => {
    const project = tempProject();
    const count = 250;
    for (let index = 0; index < count; index++) project.write(`notes/${String(index).padStart(3, '0')}.txt`, 'one\ntwo\n');
    const manager = await project.open();
    const first = await manager.checkpoint();
    for (let index = 0; index < count; index++) {
      await manager.trackEdit(`notes/${String(index).padStart(3, '0')}.txt`);
      project.write(`notes/${String(index).padStart(3, '0')}.txt`, 'one\n');
    }
    await manager.close();
    const connection = await connect(project.root, project.store);

    const listed = checkpointsOutputSchema.parse((await call(connection, 'list_checkpoints')).structuredContent);
    const preview = await call(connection, 'preview_rewind', { checkpointId: first });
    const planned = rewindOutputSchema.parse(preview.structuredContent);

    expect(listed.checkpoints[0]).toMatchObject({ filesLeftOut: 150 });
    expect(listed.checkpoints[0]!.files).toHaveLength(100);
    expect(planned).toMatchObject({ filesLeftOut: 50, insertions: 250, deletions: 0 });
    expect(planned.files).toHaveLength(200);
    expect(planned.files.filter((file) => file.diff !== undefined).length).toBeLessThan(200);
    expect(JSON.stringify(preview).length).toBeLessThan(150_000);
    expect(planned.summary).toContain('250 files, +250 -0 lines.');
    expect(textOf(preview)).toContain('- and 50 more');
  });

  it('list_sessions lists the 50 most recently active sessions and counts the older ones', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const ids: string[] = [];
    for (let index = 0; index < 53; index += 1) {
      const manager = await project.open();
      await manager.checkpoint(newId());
      await manager.close();
      ids.push(manager.sessionId);
    }
    const connection = await connect(project.root, project.store);
    const listed = await call(connection, 'list_sessions');
    const output = sessionsOutputSchema.parse(listed.structuredContent);
    expect(output.sessions).toHaveLength(50);
    expect(output.sessionsLeftOut).toBe(3);
    expect(output.sessions.map((session) => session.sessionId)).toContain(ids.at(-1));
    expect(textOf(listed)).toContain('(and 3 older session(s), left out)');
  });

  it('a file left alone whose name holds a line break stays one comment line of the diff resource', async () => {
    const project = tempProject();
    const name = 'note\ndiff --git a/evil b/evil';
    project.write(name, 'before\n');
    const manager = await project.open();
    const first = await manager.checkpoint();
    await manager.trackEdit(name);
    fs.rmSync(project.file(name));
    fs.symlinkSync(project.outside, project.file(name));
    await manager.close();
    const { client } = await connect(project.root, project.store);

    const read = await client.readResource({ uri: `rewindable://sessions/${manager.sessionId}/checkpoints/${first}/diff` });
    const text = (read.contents[0] as { text: string }).text;

    expect(text.split('\n').filter((line) => line !== '')).toEqual([expect.stringMatching(/^# left alone: "\/.*\/note\\ndiff --git a\/evil b\/evil": .* it is now a symbolic link/)]);
  });

  it('a SIGTERM while a rewind writes lets it finish and answer, then exits with 0', async () => {
    const project = tempProject();
    const count = 120;
    for (let index = 0; index < count; index++) project.write(`notes/${index}.txt`, `line ${index}\n`.repeat(20));
    const before = project.snapshot();
    const manager = await project.open();
    const first = await manager.checkpoint();
    for (let index = 0; index < count; index++) {
      await manager.trackEdit(`notes/${index}.txt`);
      project.write(`notes/${index}.txt`, `changed ${index}\n`);
    }
    await manager.close();
    const log = path.join(project.store, 'projects', encodeProjectKey(project.root), `${manager.sessionId}.jsonl`);
    const server = rawServer(project.root, project.store);
    server.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'preview_rewind', arguments: { checkpointId: first } } });
    await server.answer(2);

    server.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'rewind_files', arguments: { checkpointId: first } } });
    // The rewind has begun once its undo point is in the log; its files are written after that.
    await until(() => fs.readFileSync(log, 'utf8').includes('"rewind-begin"'));
    server.kill('SIGTERM');

    expect(await server.exited).toBe(0);
    const answer = (await server.answer(3)) as { result?: { isError?: boolean; structuredContent?: { rewound?: boolean } } };
    expect(answer.result?.isError).toBeUndefined();
    expect(answer.result?.structuredContent?.rewound).toBe(true);
    expect(project.snapshot()).toEqual(before);
  });
});

/** The built server on raw pipes, for what the SDK's client would hide: bytes on stdin, signals. */
function rawServer(cwd: string, store: string) {
  const child = spawn(process.execPath, [cli.bin, 'mcp', '--cwd', cwd, '--store', store], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: cli.home } });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const messages = () => stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id?: number });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  servers.push(async () => {
    child.kill();
    await exited;
  });
  return {
    write: (text: string) => child.stdin.write(text),
    send: (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`),
    end: () => child.stdin.end(),
    answer: async (id: number) => {
      await until(() => messages().some((message) => message.id === id));
      return messages().find((message) => message.id === id)!;
    },
    kill: (signal: NodeJS.Signals) => child.kill(signal),
    exited,
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
