import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';
import { buildServer, CallError, startServer, type BuiltServer, type ServerProcess } from './helpers/server-process.js';

/**
 * `rewindable serve --stdio` as a client sees it: the built CLI in a real
 * child process, requests on its stdin, answers on its stdout, files on disk.
 */

let built: BuiltServer;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  built = await buildServer();
});
afterAll(() => {
  for (const server of servers) server.child.kill('SIGKILL');
  built.remove();
});

function serve(): ServerProcess {
  const server = startServer(built);
  servers.push(server);
  return server;
}

async function openSession(server: ServerProcess, project: TempProject, extra: Record<string, unknown> = {}) {
  return server.call<{ handle: string; sessionId: string; root: string }>('open', { cwd: project.root, store: project.store, durability: 'none', ...extra });
}

/** The error a call fails with. */
async function failure(promise: Promise<unknown>): Promise<CallError['error']> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CallError) return error.error;
    throw error;
  }
  throw new Error('the call succeeded');
}

const binary = Buffer.from([0x00, 0xff, 0xfe, 0x0a, 0x80, 0x0d, 0x0a]);

describe('a two-turn session over the wire', () => {
  it('checkpoint, trackEdit, recordWrite, diffFiles, a dry run, a rewind, and its undo, byte for byte', async () => {
    const project = tempProject();
    project.write('src/app.ts', 'export const version = 1;\n');
    project.write('data.bin', binary);
    const server = serve();

    const initialized = await server.call('initialize', { client: 'serve.test' });
    expect(initialized).toMatchObject({ protocolVersion: 1, serverVersion: expect.any(String) });
    expect(initialized.methods).toEqual(expect.arrayContaining(['open', 'checkpoint', 'trackEdit', 'recordWrite', 'scanBegin', 'scanEnd', 'rewindFiles', 'diffFiles', 'shutdown']));
    const { handle, sessionId, root } = await openSession(server, project);
    expect(root).toBe(project.root);

    // Turn 1: the agent edits app.ts, overwrites the binary file and creates new.ts.
    const first = newId();
    expect(await server.call('checkpoint', { handle, userMessageId: first })).toEqual({ checkpointId: first });
    for (const file of ['src/app.ts', 'data.bin', 'src/new.ts']) expect(await server.call('trackEdit', { handle, path: file })).toEqual({});
    project.write('src/app.ts', 'export const version = 2;\n');
    project.write('data.bin', Buffer.from([0x01, 0x02]));
    project.write('src/new.ts', 'export const created = true;\n');
    await server.call('recordWrite', { handle, path: 'src/app.ts', tool: 'Edit', toolCallId: 'call-1' });
    await server.call('recordWrite', { handle, path: 'src/new.ts', tool: 'Write', toolCallId: 'call-2' });

    // Turn 2: another edit of app.ts.
    const second = newId();
    await server.call('checkpoint', { handle, userMessageId: second });
    await server.call('trackEdit', { handle, path: 'src/app.ts' });
    project.write('src/app.ts', 'export const version = 3;\n');
    await server.call('recordWrite', { handle, path: 'src/app.ts', tool: 'Edit', toolCallId: 'call-3' });
    const afterSecond = project.snapshot();

    const diffs = await server.call<Array<Record<string, unknown>>>('diffFiles', { handle, userMessageId: first });
    expect(diffs.map((diff) => [path.relative(project.root, diff.path as string), diff.action])).toEqual([
      ['data.bin', 'restore'],
      ['src/app.ts', 'restore'],
      ['src/new.ts', 'delete'],
    ]);
    expect(diffs[1]).toMatchObject({ insertions: 1, deletions: 1, binary: false, toolCallIds: ['call-1', 'call-3'] });
    expect(diffs[1]!.patch).toContain('-export const version = 3;\n+export const version = 1;\n');

    const preview = await server.call('rewindFiles', { handle, userMessageId: first, dryRun: true });
    expect(preview).toMatchObject({ canRewind: true, dryRun: true, insertions: 1, deletions: 2, skippedLinks: 0 });
    expect(preview.filesChanged).toEqual(['data.bin', 'src/app.ts', 'src/new.ts'].map(project.file));
    expect(project.snapshot()).toEqual(afterSecond);

    const rewound = await server.call<{ canRewind: boolean; undoCheckpointId: string; filesChanged: string[] }>('rewindFiles', { handle, userMessageId: first });
    expect(rewound).toMatchObject({ canRewind: true, dryRun: false, filesChanged: preview.filesChanged });
    expect(project.read('src/app.ts').toString()).toBe('export const version = 1;\n');
    expect(project.read('data.bin').equals(binary)).toBe(true);
    expect(project.exists('src/new.ts')).toBe(false);

    // From here, the second checkpoint is turn 1's files.
    expect(await server.call('diffFiles', { handle, userMessageId: second })).toHaveLength(3);

    // Undo: the rewind's own checkpoint holds the files as they were just before it.
    await server.call('rewindFiles', { handle, userMessageId: rewound.undoCheckpointId });
    expect(project.snapshot()).toEqual(afterSecond);

    const checkpoints = await server.call<Array<{ id: string; reason: string }>>('listCheckpoints', { handle });
    expect(checkpoints.map((checkpoint) => [checkpoint.id, checkpoint.reason])).toEqual([
      [first, 'message'],
      [second, 'message'],
      [rewound.undoCheckpointId, 'pre-rewind'],
      [expect.any(String), 'pre-rewind'],
    ]);
    expect(await server.call('listSessions', { cwd: project.root, store: project.store })).toMatchObject([{ sessionId, checkpoints: 2, trackedFiles: 3 }]);

    expect(await server.call('close', { handle })).toEqual({});
    // The lock is released: the session opens here, with the same checkpoints.
    const reopened = await project.open({ session: { resume: sessionId } });
    expect((await reopened.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual(checkpoints.map((checkpoint) => checkpoint.id));
    for (const line of server.stdoutLines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    server.child.stdin.end();
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('a real rewind that cannot happen is an error with the library’s code; its dry run answers canRewind: false', async () => {
    const project = tempProject();
    const server = serve();
    const { handle } = await openSession(server, project);
    await server.call('checkpoint', { handle });
    const unknown = newId();

    expect(await server.call('rewindFiles', { handle, userMessageId: unknown, dryRun: true })).toEqual({
      canRewind: false,
      dryRun: true,
      error: 'No file checkpoint found for this message.',
      errorCode: 'CHECKPOINT_NOT_FOUND',
      errorDetails: { id: unknown },
    });
    expect(await failure(server.call('rewindFiles', { handle, userMessageId: unknown }))).toEqual({
      code: -32000,
      message: 'No file checkpoint found for this message.',
      data: { code: 'CHECKPOINT_NOT_FOUND', details: { id: unknown } },
    });
  });
});

describe('session choices and selective rewinds', () => {
  it("session 'continue' and { resume, readOnly } reopen the session; a read-only one refuses to write", async () => {
    const project = tempProject();
    const server = serve();
    const first = await openSession(server, project);
    await server.call('checkpoint', { handle: first.handle });
    await server.call('close', { handle: first.handle });

    const continued = await openSession(server, project, { session: 'continue' });
    expect(continued.sessionId).toBe(first.sessionId);
    await server.call('close', { handle: continued.handle });
    const readOnly = await openSession(server, project, { session: { resume: first.sessionId, readOnly: true } });
    expect(await server.call('listCheckpoints', { handle: readOnly.handle })).toHaveLength(1);
    expect(await failure(server.call('checkpoint', { handle: readOnly.handle }))).toMatchObject({ code: -32000, data: { code: 'READ_ONLY' } });
  });

  it('rewindFiles with hunk ids from diffFiles, and revertTurn of one turn keeping the later one', async () => {
    const project = tempProject();
    const lines = Array.from({ length: 20 }, (_, index) => `line ${index}`);
    project.write('notes.txt', `${lines.join('\n')}\n`);
    const server = serve();
    const { handle } = await openSession(server, project);
    const [first, second] = [newId(), newId()];
    await server.call('checkpoint', { handle, userMessageId: first });
    await server.call('trackEdit', { handle, path: 'notes.txt' });
    const edited = lines.map((line, index) => (index === 1 ? 'first turn, top' : index === 18 ? 'first turn, bottom' : line));
    project.write('notes.txt', `${edited.join('\n')}\n`);
    await server.call('recordWrite', { handle, path: 'notes.txt' });
    await server.call('checkpoint', { handle, userMessageId: second });
    project.write('other.txt', 'second turn\n');
    await server.call('trackEdit', { handle, path: 'other.txt' });

    const [diff] = await server.call<Array<{ hunks: Array<{ id: string }> }>>('diffFiles', { handle, userMessageId: first, paths: ['notes.txt'], context: 0 });
    expect(diff!.hunks).toHaveLength(2);
    await server.call('rewindFiles', { handle, userMessageId: first, hunks: [diff!.hunks[0]!.id] });
    expect(project.read('notes.txt').toString()).toBe(`${edited.map((line, index) => (index === 1 ? 'line 1' : line)).join('\n')}\n`);

    const revert = await server.call('revertTurn', { handle, userMessageId: first, dryRun: true });
    expect(revert).toMatchObject({ canRewind: true, dryRun: true, filesChanged: [project.file('notes.txt')] });
  });
});

describe('several sessions on one connection', () => {
  it('two handles work side by side; rewinding one leaves the other’s files alone; a closed handle is unknown', async () => {
    const one = tempProject();
    const two = tempProject();
    one.write('file.txt', 'one before\n');
    two.write('file.txt', 'two before\n');
    const server = serve();
    const a = await openSession(server, one);
    const b = await openSession(server, two);
    expect(a.handle).not.toBe(b.handle);

    const [messageA, messageB] = [newId(), newId()];
    await Promise.all([server.call('checkpoint', { handle: a.handle, userMessageId: messageA }), server.call('checkpoint', { handle: b.handle, userMessageId: messageB })]);
    await Promise.all([server.call('trackEdit', { handle: a.handle, path: 'file.txt' }), server.call('trackEdit', { handle: b.handle, path: 'file.txt' })]);
    one.write('file.txt', 'one after\n');
    two.write('file.txt', 'two after\n');

    expect(await failure(server.call('rewindFiles', { handle: a.handle, userMessageId: messageB }))).toMatchObject({ code: -32000, data: { code: 'CHECKPOINT_NOT_FOUND' } });
    await server.call('rewindFiles', { handle: a.handle, userMessageId: messageA });
    expect(one.read('file.txt').toString()).toBe('one before\n');
    expect(two.read('file.txt').toString()).toBe('two after\n');

    await server.call('close', { handle: a.handle });
    expect(await failure(server.call('listCheckpoints', { handle: a.handle }))).toMatchObject({ code: -32000, data: { code: 'INVALID_OPTIONS', details: { option: 'handle' } } });
    expect(await server.call('listCheckpoints', { handle: b.handle })).toMatchObject([{ id: messageB }]);
    await server.call('rewindFiles', { handle: b.handle, userMessageId: messageB });
    expect(two.read('file.txt').toString()).toBe('two before\n');
  });

  it('a second open of a session the connection holds fails with SESSION_LOCKED; the first keeps working', async () => {
    const project = tempProject();
    const server = serve();
    const { handle, sessionId } = await openSession(server, project);
    await server.call('checkpoint', { handle });

    expect(await failure(openSession(server, project, { session: { resume: sessionId } }))).toMatchObject({ code: -32000, data: { code: 'SESSION_LOCKED' } });
    expect(await server.call('listCheckpoints', { handle })).toHaveLength(1);
  });
});

describe('two server processes', () => {
  it('a session one server holds is SESSION_LOCKED for the other until the first shuts down', async () => {
    const project = tempProject();
    const first = serve();
    const second = serve();
    const { handle, sessionId } = await openSession(first, project);
    await first.call('checkpoint', { handle });

    expect(await failure(openSession(second, project, { session: { resume: sessionId } }))).toMatchObject({ code: -32000, data: { code: 'SESSION_LOCKED' } });
    await first.call('shutdown');
    await first.exited;
    const reopened = await openSession(second, project, { session: { resume: sessionId } });
    expect(await second.call('listCheckpoints', { handle: reopened.handle })).toHaveLength(1);
  });
});

describe('capturing a shell command: scanBegin, the command, scanEnd', () => {
  it('rm, mv and echo > between scanBegin and scanEnd are reported, and a rewind undoes them', async () => {
    const project = tempProject();
    project.write('keep.txt', 'kept\n');
    project.write('gone.txt', 'removed by rm\n');
    project.write('dir/moved.txt', 'moved by mv\n');
    const before = project.snapshot();
    const server = serve();
    const { handle } = await openSession(server, project, { capture: true });
    const message = newId();
    await server.call('checkpoint', { handle, userMessageId: message });

    const { scanId } = await server.call<{ scanId: string }>('scanBegin', { handle, label: 'the shell tool' });
    execFileSync('sh', ['-c', 'rm gone.txt && mv dir/moved.txt renamed.txt && echo changed > keep.txt && echo new > created.txt'], { cwd: project.root });
    const changes = await server.call('scanEnd', { handle, scanId });

    expect(changes).toEqual({
      created: ['created.txt', 'renamed.txt'].map(project.file),
      modified: [project.file('keep.txt')],
      deleted: ['dir/moved.txt', 'gone.txt'].map(project.file),
      overCap: [],
      unreadable: [],
    });
    await server.call('rewindFiles', { handle, userMessageId: message });
    expect(project.snapshot()).toEqual(before);
  });

  it('scanBegin without a capture scope scans the default scope; a second scanBegin and a wrong scanId are typed errors', async () => {
    const project = tempProject();
    const server = serve();
    const plain = await openSession(server, project);
    await server.call('checkpoint', { handle: plain.handle });
    const plainScan = await server.call<{ scanId: string }>('scanBegin', { handle: plain.handle });
    project.write('by-the-shell.txt', 'x');
    expect(await server.call('scanEnd', { handle: plain.handle, scanId: plainScan.scanId })).toMatchObject({ created: [project.file('by-the-shell.txt')] });

    const other = tempProject();
    const capturing = await openSession(server, other, { capture: { exclude: ['*.log'] } });
    // Before any checkpoint, the library's own error.
    expect(await failure(server.call('scanBegin', { handle: capturing.handle }))).toMatchObject({ code: -32000, data: { code: 'NO_CHECKPOINT' } });
    await server.call('checkpoint', { handle: capturing.handle });
    const { scanId } = await server.call<{ scanId: string }>('scanBegin', { handle: capturing.handle });
    expect(await failure(server.call('scanBegin', { handle: capturing.handle }))).toMatchObject({ code: -32000, data: { code: 'INVALID_OPTIONS', details: { option: 'scanId' } } });
    expect(await failure(server.call('scanEnd', { handle: capturing.handle, scanId: 'scan-nothing' }))).toMatchObject({ code: -32000, data: { code: 'INVALID_OPTIONS' } });
    other.write('made.txt', 'x');
    other.write('ignored.log', 'x');
    expect(await server.call('scanEnd', { handle: capturing.handle, scanId })).toMatchObject({ created: [other.file('made.txt')] });
    expect(await failure(server.call('scanEnd', { handle: capturing.handle, scanId }))).toMatchObject({ data: { code: 'INVALID_OPTIONS' } });
  });

  it('closing a session with a scan still open records what the command changed', async () => {
    const project = tempProject();
    const server = serve();
    const { handle, sessionId } = await openSession(server, project, { capture: true });
    const message = newId();
    await server.call('checkpoint', { handle, userMessageId: message });
    await server.call('scanBegin', { handle });
    project.write('left-behind.txt', 'made while the scan was open\n');
    await server.call('close', { handle });

    const reopened = await project.open({ session: { resume: sessionId } });
    await reopened.rewindFiles(message);
    expect(project.exists('left-behind.txt')).toBe(false);
  });
});

describe('progress', () => {
  it('diffFiles with a progressToken sends progress notifications before its answer, the last one at done = total', async () => {
    const project = tempProject();
    const server = serve();
    const { handle } = await openSession(server, project);
    const message = newId();
    await server.call('checkpoint', { handle, userMessageId: message });
    for (let index = 0; index < 5; index += 1) {
      await server.call('trackEdit', { handle, path: `file-${index}.txt` });
      project.write(`file-${index}.txt`, `${index}\n`);
    }
    const from = server.messages.length;

    const response = await server.request('diffFiles', { handle, userMessageId: message, progressToken: 'diff-1' });
    const notifications = server.messages.slice(from, server.messages.indexOf(response)).filter((line) => line.method === 'progress');

    expect((response.result as unknown[]).length).toBe(5);
    expect(notifications.length).toBeGreaterThan(0);
    expect(notifications.every((line) => line.params!.progressToken === 'diff-1' && line.params!.total === 5 && typeof line.params!.path === 'string')).toBe(true);
    expect(notifications.at(-1)!.params).toMatchObject({ done: 5, total: 5 });
    // Without a token, none.
    const quiet = server.messages.length;
    await server.request('diffFiles', { handle, userMessageId: message });
    expect(server.messages.slice(quiet).filter((line) => line.method === 'progress')).toEqual([]);
  });
});

describe('the conversation over the wire', () => {
  it('recordUserMessage, recordMessage, getTranscript, listBranches and a conversation rewind', async () => {
    const project = tempProject();
    const server = serve();
    const { handle } = await openSession(server, project);
    const question = newId();
    const user = await server.call('recordUserMessage', { handle, message: { role: 'user', content: 'Rename greet' }, uuid: question });
    expect(user).toMatchObject({ uuid: question, type: 'user', parentUuid: null });
    await server.call('recordMessage', { handle, type: 'assistant', message: { role: 'assistant', content: 'Done.' } });

    expect(await server.call('getTranscript', { handle })).toHaveLength(2);
    expect(await server.call('listBranches', { handle })).toHaveLength(1);
    expect(await server.call('listCheckpoints', { handle })).toMatchObject([{ id: question, prompt: 'Rename greet' }]);
    const rewound = await server.call('rewind', { handle, userMessageId: question, scope: 'conversation' });
    expect(rewound).toMatchObject({ status: 'success', scope: 'conversation', conversation: { leafUuid: null, messages: [] } });
  });
});

describe('ending the connection', () => {
  it('shutdown answers {} once every session is closed, and the server exits 0', async () => {
    const project = tempProject();
    const server = serve();
    const { handle, sessionId } = await openSession(server, project);
    await server.call('checkpoint', { handle });

    expect(await server.call('shutdown', {})).toEqual({});
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(await (await project.open({ session: { resume: sessionId } })).listCheckpoints()).toHaveLength(1);
    expect(server.stderr()).toBe('');
  });

  it('the end of stdin closes every session and exits 0', async () => {
    const project = tempProject();
    const server = serve();
    const sessions = [await openSession(server, project), await openSession(server, project)];
    for (const { handle } of sessions) await server.call('checkpoint', { handle });

    server.child.stdin.end();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    for (const { sessionId } of sessions) await project.open({ session: { resume: sessionId } });
  });

  it('a last request without its newline before the end of stdin is still answered', async () => {
    const project = tempProject();
    const server = serve();

    server.write(JSON.stringify({ jsonrpc: '2.0', id: 'last', method: 'listSessions', params: { cwd: project.root, store: project.store } }));
    server.child.stdin.end();

    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.messages).toEqual([{ jsonrpc: '2.0', id: 'last', result: [] }]);
  });

  it('serve without --stdio is a usage error (exit 2)', () => {
    const run = spawnSync(process.execPath, [built.cli, 'serve'], { encoding: 'utf8', env: { ...process.env, HOME: built.home } });

    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('serve needs --stdio');
  });
});
