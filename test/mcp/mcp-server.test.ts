import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { CheckpointManager } from '../../src/index.js';
import { checkpointsOutputSchema, rewindOutputSchema, sessionsOutputSchema } from '../../src/mcp/output-schemas.js';
import { buildCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { holdSession } from '../cli/helpers/locked-session.js';
import { gitEnvironment } from '../helpers/git-merge-file.js';
import { connectMcp, errorOf, textOf, type McpConnection } from './helpers/mcp-client.js';
import { firstPrompt, promptedSession, secondPrompt } from './helpers/prompted-session.js';

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

/** The text of a resource read's one content (a blob would be binary). */
function resourceText(result: ReadResourceResult): string {
  const [content] = result.contents;
  if (content === undefined || !('text' in content)) throw new Error(`expected one text content, got ${JSON.stringify(result.contents)}`);
  return content.text;
}

async function call(connection: McpConnection, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await connection.client.callTool({ name, arguments: args })) as CallToolResult;
}

describe('rewindable mcp: tools', () => {
  it('lists six tools, each with an input and output schema and the annotations of what it does', async () => {
    const { project } = await promptedSession();
    const { client } = await connect(project.root, project.store);

    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));

    expect(Object.keys(byName).sort()).toEqual(['list_checkpoints', 'list_sessions', 'preview_rewind', 'revert_turn', 'rewind_files', 'undo_rewind']);
    for (const name of ['list_sessions', 'list_checkpoints', 'preview_rewind']) {
      expect(byName[name]!.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    }
    for (const name of ['rewind_files', 'undo_rewind', 'revert_turn']) {
      expect(byName[name]!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    }
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    expect(byName.preview_rewind!.inputSchema.required).toEqual(['checkpointId']);
    expect(byName.rewind_files!.inputSchema.properties).toMatchObject({ onConflict: { enum: ['overwrite', 'skip', 'merge', 'markers'] } });
    expect(byName.rewind_files!.description).toMatch(/REFUSES \(PREVIEW_REQUIRED\) unless preview_rewind was called for the same checkpoint in this connection/);
  });

  it('list_sessions and list_checkpoints give the session, its prompts, times and files, in text and structured content', async () => {
    const { project, sessionId, first, second } = await promptedSession();
    const connection = await connect(project.root, project.store);

    const sessions = await call(connection, 'list_sessions');
    const checkpoints = await call(connection, 'list_checkpoints');

    expect(sessionsOutputSchema.parse(sessions.structuredContent)).toMatchObject({ cwd: project.root, store: project.store, sessions: [{ sessionId, checkpoints: 2, trackedFiles: 4 }] });
    expect(textOf(sessions)).toContain(sessionId);
    const listed = checkpointsOutputSchema.parse(checkpoints.structuredContent);
    expect(listed.sessionId).toBe(sessionId);
    expect(listed.checkpoints.map(({ id, kind, prompt, files }) => ({ id, kind, prompt, files: files.map((file) => file.slice(project.root.length + 1)) }))).toEqual([
      { id: first, kind: 'message', prompt: firstPrompt, files: ['src/greet.ts', 'src/farewell.ts'] },
      // The files turn one changed are recorded again: their state at the second prompt.
      { id: second, kind: 'message', prompt: secondPrompt, files: ['src/greet.ts', 'src/farewell.ts', 'README.md', 'run.sh'] },
    ]);
    expect(Date.parse(listed.checkpoints[0]!.createdAt)).not.toBeNaN();
    expect(textOf(checkpoints)).toContain(JSON.stringify(firstPrompt));
    expect(textOf(checkpoints)).toContain(first);
  });

  it('rewind_files is refused without a preview; after preview_rewind it restores the bytes and modes, and undo_rewind puts them back', async () => {
    const { project, sessionId, first, atFirst, atEnd } = await promptedSession();
    const connection = await connect(project.root, project.store);

    const refused = await call(connection, 'rewind_files', { checkpointId: first });
    expect(errorOf(refused)?.code).toBe('PREVIEW_REQUIRED');
    expect(textOf(refused)).toMatch(/^PREVIEW_REQUIRED: No preview of a rewind .* Call preview_rewind with this checkpointId \(and the same paths\) first/);
    expect(project.snapshot()).toEqual(atEnd);

    const preview = await call(connection, 'preview_rewind', { checkpointId: first });
    expect(preview.isError).toBeUndefined();
    const planned = rewindOutputSchema.parse(preview.structuredContent);
    expect(planned).toMatchObject({ sessionId, checkpointId: first, dryRun: true, rewound: false, insertions: 4, deletions: 2, conflicts: [], skipped: [] });
    expect(planned.files.map(({ path, action, insertions, deletions }) => ({ path: path.slice(project.root.length + 1), action, insertions, deletions }))).toEqual([
      { path: 'README.md', action: 'recreate', insertions: 3, deletions: 0 },
      { path: 'run.sh', action: 'chmod', insertions: 0, deletions: 0 },
      { path: 'src/farewell.ts', action: 'delete', insertions: 0, deletions: 1 },
      { path: 'src/greet.ts', action: 'restore', insertions: 1, deletions: 1 },
    ]);
    const greet = planned.files.find((file) => file.path.endsWith('greet.ts'))!;
    expect(greet.diff).toContain('-  return `Hello, ${name}!`;\n+  return `Hello, ${name}`;\n');
    expect(planned.summary).toBe(
      `Preview (nothing written) of a rewind of session ${sessionId} to checkpoint ${first}: 4 files, +4 -2 lines. ` +
        'Show the user this preview; to apply it, call rewind_files with the same checkpointId (and paths).',
    );
    expect(textOf(preview)).toContain(`${planned.summary}\n`);
    expect(textOf(preview)).toContain('- restore src/greet.ts (+1 -1)');
    expect(project.snapshot()).toEqual(atEnd);

    const rewound = await call(connection, 'rewind_files', { checkpointId: first });
    expect(rewound.isError).toBeUndefined();
    const result = rewindOutputSchema.parse(rewound.structuredContent);
    expect(result).toMatchObject({ dryRun: false, rewound: true, insertions: 4, deletions: 2 });
    expect(project.snapshot()).toEqual(atFirst);
    expect(result.summary).toContain(`To undo: undo_rewind with undoCheckpointId ${result.undoCheckpointId}.`);

    // The preview was used up by the rewind it allowed.
    expect(errorOf(await call(connection, 'rewind_files', { checkpointId: first }))?.code).toBe('PREVIEW_REQUIRED');

    const undone = await call(connection, 'undo_rewind', { undoCheckpointId: result.undoCheckpointId });
    expect(undone.isError).toBeUndefined();
    expect(rewindOutputSchema.parse(undone.structuredContent)).toMatchObject({ rewound: true, checkpointId: result.undoCheckpointId });
    expect(project.snapshot()).toEqual(atEnd);

    // The undo point is listed; a message's checkpoint is not one.
    const kinds = checkpointsOutputSchema.parse((await call(connection, 'list_checkpoints', { sessionId })).structuredContent).checkpoints.map((checkpoint) => checkpoint.kind);
    expect(kinds).toEqual(['message', 'message', 'undo', 'undo']);
    expect(errorOf(await call(connection, 'undo_rewind', { undoCheckpointId: first }))?.code).toBe('NOT_AN_UNDO_CHECKPOINT');
  });

  it('a preview counts only for its paths, and only while the files are as it showed them', async () => {
    const { project, first, atEnd } = await promptedSession();
    const connection = await connect(project.root, project.store);

    // A preview of one file allows no rewind of all of them.
    expect((await call(connection, 'preview_rewind', { checkpointId: first, paths: ['src/greet.ts'] })).isError).toBeUndefined();
    expect(errorOf(await call(connection, 'rewind_files', { checkpointId: first }))?.code).toBe('PREVIEW_REQUIRED');
    expect(project.snapshot()).toEqual(atEnd);

    // A file edited after the preview: the rewind would discard the edit the preview did not show.
    expect((await call(connection, 'preview_rewind', { checkpointId: first })).isError).toBeUndefined();
    project.write('src/greet.ts', 'edited by the user after the preview\n');
    const stale = await call(connection, 'rewind_files', { checkpointId: first });
    expect(errorOf(stale)?.code).toBe('PREVIEW_STALE');
    expect(project.read('src/greet.ts').toString()).toBe('edited by the user after the preview\n');
    // Used up: a new preview is needed, and then the rewind runs.
    expect(errorOf(await call(connection, 'rewind_files', { checkpointId: first }))?.code).toBe('PREVIEW_REQUIRED');
    expect((await call(connection, 'preview_rewind', { checkpointId: first })).isError).toBeUndefined();
    expect((await call(connection, 'rewind_files', { checkpointId: first })).isError).toBeUndefined();
  });

  it('a preview of one checkpoint does not allow a rewind to another; a rewind of some paths changes only those', async () => {
    const { project, first, second, atEnd, atSecond } = await promptedSession();
    const connection = await connect(project.root, project.store);

    await call(connection, 'preview_rewind', { checkpointId: second, paths: ['README.md'] });
    expect(errorOf(await call(connection, 'rewind_files', { checkpointId: first }))?.code).toBe('PREVIEW_REQUIRED');
    expect(project.snapshot()).toEqual(atEnd);

    const rewound = await call(connection, 'rewind_files', { checkpointId: second, paths: ['README.md'] });
    expect(rewindOutputSchema.parse(rewound.structuredContent).files.map((file) => file.action)).toEqual(['recreate']);
    expect(project.read('README.md')).toEqual(Buffer.from(atSecond['README.md']!.split(' ')[1]!, 'base64'));
    expect(fs.statSync(project.file('run.sh')).mode & 0o777).toBe(0o755);
  });

  it('revert_turn previews with dryRun, then undoes one turn and keeps the later one', async () => {
    const { project, first, atEnd } = await promptedSession();
    const connection = await connect(project.root, project.store);

    const dry = await call(connection, 'revert_turn', { checkpointId: first, dryRun: true });
    expect(rewindOutputSchema.parse(dry.structuredContent)).toMatchObject({ dryRun: true, rewound: false, insertions: 1, deletions: 2 });
    expect(project.snapshot()).toEqual(atEnd);

    const reverted = await call(connection, 'revert_turn', { checkpointId: first });
    expect(rewindOutputSchema.parse(reverted.structuredContent)).toMatchObject({ rewound: true });
    expect(project.read('src/greet.ts').toString()).toBe('export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n');
    expect(project.exists('src/farewell.ts')).toBe(false);
    // Turn two's changes stay.
    expect(project.exists('README.md')).toBe(false);
    expect(fs.statSync(project.file('run.sh')).mode & 0o777).toBe(0o755);
  });
});

describe('rewindable mcp: resources', () => {
  it('reads the sessions, a session’s checkpoints (listed from the template) and the whole diff of a rewind', async () => {
    const { project, sessionId, first, atFirst } = await promptedSession();
    const { client } = await connect(project.root, project.store);

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      'rewindable://sessions/{sessionId}/checkpoints',
      'rewindable://sessions/{sessionId}/checkpoints/{checkpointId}/diff',
    ]);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['rewindable://sessions', `rewindable://sessions/${sessionId}/checkpoints`]);

    const sessions = await client.readResource({ uri: 'rewindable://sessions' });
    expect(sessionsOutputSchema.parse(JSON.parse(resourceText(sessions))).sessions.map((session) => session.sessionId)).toEqual([sessionId]);
    const checkpoints = await client.readResource({ uri: `rewindable://sessions/${sessionId}/checkpoints` });
    expect(checkpointsOutputSchema.parse(JSON.parse(resourceText(checkpoints))).checkpoints[0]).toMatchObject({ id: first, prompt: firstPrompt });
    const diff = await client.readResource({ uri: `rewindable://sessions/${sessionId}/checkpoints/${first}/diff` });
    expect(diff.contents[0]).toMatchObject({ mimeType: 'text/x-diff' });
    const patch = resourceText(diff);
    expect(patch).toContain('diff --git a/src/greet.ts b/src/greet.ts\n');
    expect(patch).toContain('deleted file mode 100644');
    expect(patch).toContain('+# demo\n');

    // The document is a patch git applies: applied to the files now, it does what the rewind would, modes too.
    const patchFile = path.join(project.outside, 'rewind.patch');
    fs.writeFileSync(patchFile, patch);
    execFileSync('git', ['apply', patchFile], { cwd: project.root, env: { ...gitEnvironment, GIT_CEILING_DIRECTORIES: path.dirname(project.root) }, stdio: 'pipe' });
    expect(project.snapshot()).toEqual(atFirst);
  });

  it('an unknown session is a resource-not-found error naming the code', async () => {
    const { project } = await promptedSession();
    const { client } = await connect(project.root, project.store);

    const unknown = '00000000-0000-4000-8000-000000000000';
    await expect(client.readResource({ uri: `rewindable://sessions/${unknown}/checkpoints` })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('SESSION_NOT_FOUND') });
  });
});

describe('rewindable mcp: bad input and locks', () => {
  it('ids that are not UUIDs, an unknown session and an unknown checkpoint are tool errors with rewindable codes', async () => {
    const { project, first } = await promptedSession();
    const connection = await connect(project.root, project.store);

    const badCheckpoint = await call(connection, 'preview_rewind', { checkpointId: 'not-a-uuid' });
    const badSession = await call(connection, 'list_checkpoints', { sessionId: '../../etc' });
    const unknownSession = await call(connection, 'preview_rewind', { sessionId: '00000000-0000-4000-8000-000000000000', checkpointId: first });
    const unknownCheckpoint = await call(connection, 'preview_rewind', { checkpointId: '00000000-0000-4000-8000-000000000001' });
    const wrongType = await call(connection, 'rewind_files', { checkpointId: first, onConflict: 'yolo' });

    expect(errorOf(badCheckpoint)).toMatchObject({ code: 'INVALID_ID', message: expect.stringContaining('"not-a-uuid"') });
    expect(errorOf(badSession)).toMatchObject({ code: 'INVALID_ID', message: expect.stringContaining('"../../etc"') });
    expect(errorOf(unknownSession)?.code).toBe('SESSION_NOT_FOUND');
    expect(errorOf(unknownCheckpoint)?.code).toBe('CHECKPOINT_NOT_FOUND');
    expect(textOf(unknownCheckpoint)).toMatch(/^CHECKPOINT_NOT_FOUND: No file checkpoint found for this message/);
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/Input validation error: .*onConflict/s);
    expect(errorOf(wrongType)).toBeUndefined();
  });

  it('a project with no session says so with SESSION_NOT_FOUND; the server keeps serving', async () => {
    const { project } = await promptedSession();
    const empty = fs.mkdtempSync(`${project.outside}/empty-`);
    const connection = await connect(empty, project.store);

    expect(errorOf(await call(connection, 'list_checkpoints'))?.code).toBe('SESSION_NOT_FOUND');
    expect(sessionsOutputSchema.parse((await call(connection, 'list_sessions')).structuredContent).sessions).toEqual([]);
  });

  it('a session another live process holds: listing and previews work, a rewind fails with SESSION_LOCKED and writes nothing', async () => {
    const { project, sessionId, first, atEnd } = await promptedSession();
    const holder = await holdSession({ cwd: project.root, storeDir: project.store, sessionId });
    try {
      const connection = await connect(project.root, project.store);
      expect((await call(connection, 'list_checkpoints')).isError).toBeUndefined();
      expect((await call(connection, 'preview_rewind', { checkpointId: first })).isError).toBeUndefined();

      const locked = await call(connection, 'rewind_files', { checkpointId: first });
      const undo = await call(connection, 'revert_turn', { checkpointId: first });

      expect(errorOf(locked)).toMatchObject({ code: 'SESSION_LOCKED', details: { pid: holder.pid } });
      expect(textOf(locked)).toMatch(/^SESSION_LOCKED: /);
      expect(errorOf(undo)?.code).toBe('SESSION_LOCKED');
      expect(project.snapshot()).toEqual(atEnd);

      // Once the holder is gone, the same connection's preview still allows the rewind.
      await holder.release();
      expect((await call(connection, 'rewind_files', { checkpointId: first })).isError).toBeUndefined();
    } finally {
      await holder.release();
    }
  });

  it('holds no lock while idle: the harness opens the session for writing between two calls', async () => {
    const { project, sessionId, first } = await promptedSession();
    const connection = await connect(project.root, project.store);
    await call(connection, 'preview_rewind', { checkpointId: first });
    const rewound = rewindOutputSchema.parse((await call(connection, 'rewind_files', { checkpointId: first })).structuredContent);
    expect(rewound.rewound).toBe(true);

    const harness = await CheckpointManager.open({ cwd: project.root, storeDir: project.store, session: { resume: sessionId } });
    await harness.close();
  });
});
