import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { checkpointsOutputSchema, sessionsOutputSchema } from '../../src/mcp/output-schemas.js';
import { buildCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { connectMcp, errorOf, type McpConnection } from './helpers/mcp-client.js';
import { promptedSession } from './helpers/prompted-session.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const connections: McpConnection[] = [];
afterEach(async () => {
  while (connections.length > 0) await connections.pop()!.close();
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
    const { project, first, second, atFirst, atSecond } = await promptedSession();
    const connection = await connect(project.root, project.store);
    await call(connection, 'preview_rewind', { checkpointId: first });
    await call(connection, 'preview_rewind', { checkpointId: second });

    const [toFirst, toSecond] = await Promise.all([call(connection, 'rewind_files', { checkpointId: first }), call(connection, 'rewind_files', { checkpointId: second })]);

    expect([toFirst.isError, toSecond.isError]).toEqual([undefined, undefined]);
    expect([atFirst, atSecond]).toContainEqual(project.snapshot());
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
    const child = spawn(process.execPath, [cli.bin, 'mcp', '--cwd', project.root, '--store', project.store], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: cli.home } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    child.stdin.write('this is not json\n{"jsonrpc":"2.0","id":\n');
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    await new Promise<void>((resolve) => {
      const check = () => (stdout.includes('"id":1') ? resolve() : setTimeout(check, 20));
      check();
    });
    child.stdin.end();

    expect(await exited).toBe(0);
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line) as { id?: number; result?: { serverInfo?: { name: string } } });
    expect(answers.find((message) => message.id === 1)?.result?.serverInfo?.name).toBe('rewindable');
  });
});
