import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newId, snapshotTree, tempProject, type TempProject } from '../helpers/temp-project.js';
import { buildServer, startServer, type BuiltServer, type Message, type ServerProcess } from './helpers/server-process.js';

/**
 * Bad input gets a JSON-RPC error, changes nothing on disk, and the server
 * answers the next line as if nothing had happened. One server for the whole
 * file, as a long-lived client would have it.
 */

let built: BuiltServer;
let server: ServerProcess;
let project: TempProject;
let handle: string;
let message: string;

beforeAll(async () => {
  built = await buildServer();
  server = startServer(built);
});
afterAll(async () => {
  server.child.stdin.end();
  await server.exited;
  built.remove();
});

/** The project, the store (locks aside: a live lock's lease is renewed) and the directory outside the project. */
function disk(): Record<string, string> {
  const store = Object.fromEntries(Object.entries(snapshotTree(project.store)).filter(([name]) => !name.endsWith('.lock')));
  return { ...project.snapshot(), ...prefixed('store', store), ...prefixed('outside', snapshotTree(project.outside)) };
}

function prefixed(prefix: string, tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).map(([name, value]) => [`${prefix}:${name}`, value]));
}

/** Sends a raw line and resolves with the next message the server prints. */
async function answerTo(line: string | Buffer): Promise<Message> {
  const from = server.messages.length;
  server.write(line);
  return server.waitFor(() => true, from);
}

/** The session still answers, with the one checkpoint and tracked file of the setup. */
async function stillServing(): Promise<void> {
  expect(await server.call('listCheckpoints', { handle })).toMatchObject([{ id: message, files: [project.file('tracked.txt')] }]);
}

// Each test starts from a fresh project with one open session, one checkpoint and one tracked, edited file.
beforeEach(async () => {
  project = tempProject();
  project.write('tracked.txt', 'before\n');
  ({ handle } = await server.call<{ handle: string }>('open', { cwd: project.root, store: project.store, durability: 'none' }));
  message = newId();
  await server.call('checkpoint', { handle, userMessageId: message });
  await server.call('trackEdit', { handle, path: 'tracked.txt' });
  project.write('tracked.txt', 'after\n');
});
afterEach(async () => {
  await server.call('close', { handle });
});

const request = (method: string, params: unknown, id: unknown = 7) => `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;

describe('malformed lines', () => {
  it.each([
    { name: 'not JSON', line: 'rewindFiles please\n', code: -32700, id: null },
    { name: 'truncated JSON', line: '{"jsonrpc":"2.0","id":1,"method":\n', code: -32700, id: null },
    { name: 'a batch', line: `[${request('rewindFiles', { handle: 'x', userMessageId: newId() }).trim()}]\n`, code: -32600, id: null },
    { name: 'a JSON value that is no object', line: '42\n', code: -32600, id: null },
    { name: 'no jsonrpc field', line: '{"id":1,"method":"listCheckpoints","params":{}}\n', code: -32600, id: 1 },
    { name: 'an id that is an object', line: '{"jsonrpc":"2.0","id":{"a":1},"method":"listCheckpoints"}\n', code: -32600, id: null },
    { name: 'a method that is no string', line: '{"jsonrpc":"2.0","id":1,"method":7}\n', code: -32600, id: 1 },
    { name: 'params that are a string', line: '{"jsonrpc":"2.0","id":1,"method":"listCheckpoints","params":"x"}\n', code: -32600, id: 1 },
    { name: 'bytes that are not UTF-8', line: Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), code: -32700, id: null },
  ])('$name: error $code, nothing changed, the next line is served', async ({ line, code, id }) => {
    const before = disk();

    const answer = await answerTo(line);

    expect(answer).toEqual({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
    expect(disk()).toEqual(before);
    await stillServing();
  });

  it('a batch of valid requests runs none of them', async () => {
    const before = disk();
    const batch = [JSON.parse(request('rewindFiles', { handle, userMessageId: message })), JSON.parse(request('checkpoint', { handle }, 8))];

    expect(await answerTo(`${JSON.stringify(batch)}\n`)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Batches are not supported: send one request per line.' } });
    expect(disk()).toEqual(before);
    await stillServing();
  });

  it('a line over 16 MiB is answered with -32600 and discarded; one of 16 MiB is read', async () => {
    const before = disk();
    const over = request('trackEdit', { handle, path: 'x'.repeat(16 * 1024 * 1024) });

    const answer = await answerTo(over);

    expect(answer).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('over the limit of 16777216 bytes') } });
    expect(disk()).toEqual(before);
    await stillServing();
    // Just under the cap: read and answered.
    const under = request('initialize', { client: 'y'.repeat(16 * 1024 * 1024 - 100) });
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(await answerTo(under)).toMatchObject({ id: 7, result: { protocolVersion: 1 } });
  });

  it('empty lines are skipped, and a notification (no id) gets no answer', async () => {
    const before = disk();
    server.write('\n\r\n   \n');
    server.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'noSuchMethod' })}\n`);
    server.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'checkpoint', params: { handle, userMessageId: 'bad' } })}\n`);
    const from = server.messages.length;

    await stillServing();

    expect(server.messages.slice(from)).toHaveLength(1);
    expect(disk()).toEqual(before);
  });
});

describe('requests the server refuses before anything happens', () => {
  it('an unknown method: -32601 with the request id', async () => {
    expect(await server.request('rewindEverything', { handle })).toEqual({
      jsonrpc: '2.0',
      id: expect.any(Number),
      error: { code: -32601, message: 'Method not found: "rewindEverything". Call initialize for the list of methods.' },
    });
    // Not an inherited property either.
    expect((await server.request('toString', {})).error?.code).toBe(-32601);
    await stillServing();
  });

  it.each([
    ['a handle that is a number', 'listCheckpoints', { handle: 5 }, ['handle']],
    ['dryRun as a string', 'rewindFiles', { handle: 'h', userMessageId: newId(), dryRun: 'yes' }, ['dryRun']],
    ['paths as a string', 'rewindFiles', { handle: 'h', userMessageId: newId(), paths: 'src' }, ['paths']],
    ['an onConflict mode that does not exist', 'rewindFiles', { handle: 'h', userMessageId: newId(), onConflict: 'theirs' }, ['onConflict']],
    ['a field spelt the Python way', 'rewindFiles', { handle: 'h', userMessageId: newId(), dry_run: true }, []],
    ['a missing required field', 'trackEdit', { handle: 'h' }, ['path']],
    ['params as an array', 'listCheckpoints', ['h'], []],
    ['a durability that does not exist', 'open', { cwd: '/tmp', durability: 'fast' }, ['durability']],
    ['a session choice that is neither', 'open', { cwd: '/tmp', session: { id: newId(), resume: newId() } }, ['session']],
    ['a message checkpoint id that is not a UUID', 'checkpoint', { handle: 'h', userMessageId: 'msg-1' }, ['userMessageId']],
    ['a rewind target that is not a UUID', 'rewindFiles', { handle: 'h', userMessageId: '1234' }, ['userMessageId']],
    ['a session to resume that is not a UUID', 'open', { cwd: '/tmp', session: { resume: 'latest' } }, ['session']],
    ['a parent message that is not a UUID', 'recordMessage', { handle: 'h', type: 'assistant', message: 'hi', parentUuid: 'nope' }, ['parentUuid']],
    ['a leaf that is not a UUID', 'getTranscript', { handle: 'h', leafUuid: 'x' }, ['leafUuid']],
  ])('%s: -32602 with data.code INVALID_OPTIONS (INVALID_ID for an id alone) and the issues', async (name, method, params, where) => {
    const before = disk();
    const named = Array.isArray(params) ? params : { ...params, ...('handle' in params && params.handle === 'h' ? { handle } : {}) };

    const answer = await server.request(method, named);

    expect(answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(new RegExp(`^Invalid params for ${method}: `)), data: { code: name.endsWith('not a UUID') && where.length > 0 && where[0] !== 'session' ? 'INVALID_ID' : 'INVALID_OPTIONS' } });
    const issues = answer.error!.data!.details!.issues as Array<{ path: string[]; message: string }>;
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]!.path).toEqual(where);
    expect(disk()).toEqual(before);
    await stillServing();
  });

  it('a misspelt dryRun never turns a preview into a rewind', async () => {
    await server.request('rewindFiles', { handle, userMessageId: message, dryrun: true });
    expect(project.read('tracked.txt').toString()).toBe('after\n');
  });
});

describe('the server never reads or writes outside the session’s project and store', () => {
  it.each([
    ['a relative path that climbs out', () => '../outside/canary.txt'],
    ['an absolute path outside the project', () => path.join(project.outside, 'canary.txt')],
    ['a path through the project into its parent', () => `${project.root}/../outside/canary.txt`],
  ])('trackEdit and recordWrite of %s are refused with PATH_OUTSIDE_PROJECT and write nothing', async (_name, target) => {
    fs.writeFileSync(path.join(project.outside, 'canary.txt'), 'canary\n');
    const before = disk();

    for (const method of ['trackEdit', 'recordWrite']) {
      const answer = await server.request(method, { handle, path: target() });
      expect(answer.error).toMatchObject({ code: -32000, data: { code: 'PATH_OUTSIDE_PROJECT', details: { path: target() } } });
    }

    expect(disk()).toEqual(before);
    await stillServing();
    expect((await server.call<Array<{ files: string[] }>>('listCheckpoints', { handle }))[0]!.files).toEqual([project.file('tracked.txt')]);
  });

  it('a rewind given a path outside the project selects nothing and changes nothing', async () => {
    const before = disk();
    const answer = await server.request('rewindFiles', { handle, userMessageId: message, paths: [project.outside] });
    expect(answer.error).toMatchObject({ code: -32000, data: { code: 'INVALID_PATH' } });
    expect(disk()).toEqual(before);
  });
});
