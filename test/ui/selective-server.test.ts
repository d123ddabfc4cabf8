import { afterEach, describe, expect, it } from 'vitest';
import { startTimelineServer, type TimelineServer } from '../../src/ui/timeline-server.js';
import { httpRequest, sameOriginPost } from './helpers/http-request.js';
import { configBefore, notesAfter, notesBefore, twoTurnSession, type TwoTurnSession } from './helpers/two-turn-session.js';

const servers: TimelineServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close();
});

async function serve(session: TwoTurnSession): Promise<{ server: TimelineServer; post: (part: string, body: unknown) => ReturnType<typeof httpRequest>; base: string }> {
  const server = await startTimelineServer({ cwd: session.project.root, storeDir: session.project.store });
  servers.push(server);
  const base = `/${server.token}/api/sessions/${session.sessionId}`;
  return { server, base, post: (part, body) => httpRequest(server.port, `${base}/${part}`, sameOriginPost(server.port, body)) };
}

/** The hunk ids of a file in a checkpoint's preview, in patch order. */
async function hunkIdsOf(server: TimelineServer, session: TwoTurnSession, relative: string): Promise<string[]> {
  const preview = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}/checkpoints/${session.first}/preview`);
  return preview.json.files.find((file: { path: string }) => file.path === session.project.file(relative)).hunkIds;
}

const text = (session: TwoTurnSession, relative: string) => session.project.read(relative).toString('utf8');

describe('startTimelineServer: rewinds of some files or hunks, and reverts of one turn', () => {
  it('previews and rewinds one file of a turn that changed two, then undoes it', async () => {
    const session = await twoTurnSession();
    const { post } = await serve(session);

    const preview = await post('rewind', { checkpointId: session.first, paths: [session.project.file('a.txt')], dryRun: true });
    expect(preview.status).toBe(200);
    expect(preview.json.counts).toEqual({ files: 1, insertions: 1, deletions: 1, conflicts: 0, leftAlone: 0 });
    expect(preview.json.report[0]).toBe(`A rewind to message ${session.first} would change 1 file (+1 -1):`);
    expect(session.project.snapshot()).toEqual(session.atEnd);

    const rewind = await post('rewind', { checkpointId: session.first, paths: [session.project.file('a.txt')], plan: preview.json.plan });

    expect(rewind.status).toBe(200);
    expect(rewind.json.report[0]).toBe(`Files rewound to state at message ${session.first}`);
    expect(rewind.json.report).toContain('The rewind changed 1 file (+1 -1):');
    expect(text(session, 'a.txt')).toBe('alpha\n');
    expect(text(session, 'b.txt')).toBe('beta, changed\n');

    const undo = await post('undo', { undoCheckpointId: rewind.json.undoCheckpointId });
    expect(undo.status).toBe(200);
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('rewinds one hunk of a file of two hunks, leaving the other as it is', async () => {
    const session = await twoTurnSession();
    const { server, post } = await serve(session);
    const [firstHunk] = await hunkIdsOf(server, session, 'notes.txt');

    const preview = await post('rewind', { checkpointId: session.first, hunks: [firstHunk], dryRun: true });
    const rewind = await post('rewind', { checkpointId: session.first, hunks: [firstHunk], plan: preview.json.plan });

    expect(preview.json.report[0]).toBe(`A rewind of 1 hunk to message ${session.first} would change 1 file (+1 -1):`);
    expect(rewind.status).toBe(200);
    expect(rewind.json.report[0]).toBe(`1 hunk rewound to state at message ${session.first}`);
    expect(text(session, 'notes.txt')).toBe(notesAfter.replace('line one\n', 'line 1\n'));
    expect(text(session, 'notes.txt')).not.toBe(notesBefore);
    expect(text(session, 'a.txt')).toBe('alpha, changed\n');
  });

  it("reverts one turn and keeps a later turn's edit of the same file, in the CLI's words, then undoes it", async () => {
    const session = await twoTurnSession();
    const { post } = await serve(session);

    const preview = await post('revert', { checkpointId: session.first, onConflict: 'skip', dryRun: true });
    expect(preview.status).toBe(200);
    expect(preview.json.counts).toEqual({ files: 4, insertions: 5, deletions: 5, conflicts: 0, leftAlone: 0 });
    expect(preview.json.report).toContain('restore  +1 -1  config.ts  merged');

    const revert = await post('revert', { checkpointId: session.first, onConflict: 'skip', plan: preview.json.plan });

    expect(revert.status).toBe(200);
    expect(revert.json.report[0]).toBe(`Reverted the file changes of the turn of message ${session.first}`);
    expect(text(session, 'config.ts')).toBe(configBefore.replace('"localhost"', '"0.0.0.0"'));
    expect(text(session, 'notes.txt')).toBe(notesBefore);
    expect(text(session, 'a.txt')).toBe('alpha\n');

    const undo = await post('undo', { undoCheckpointId: revert.json.undoCheckpointId });
    expect(undo.status).toBe(200);
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('refuses a hunk id of the wrong shape with INVALID_OPTIONS, changing nothing', async () => {
    const session = await twoTurnSession();
    const { post } = await serve(session);

    for (const hunks of [['not-a-hunk'], ['daf9ca17247a-2-2'], [42], []]) {
      const answer = await post('rewind', { checkpointId: session.first, hunks, plan: 'x' });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'hunks' } });
    }
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('refuses a path the session does not track with INVALID_PATH, in a dry run and a real one, changing nothing', async () => {
    const session = await twoTurnSession();
    session.project.write('untracked.txt', 'never tracked\n');
    const { post } = await serve(session);
    const before = session.project.snapshot();

    for (const paths of [[session.project.file('untracked.txt')], ['a.txt'], [`${session.project.root}/../project/a.txt`], [session.project.root]]) {
      const dryRun = await post('rewind', { checkpointId: session.first, paths, dryRun: true });
      const real = await post('rewind', { checkpointId: session.first, paths, plan: 'x' });
      expect(dryRun.status).toBe(400);
      expect(dryRun.json.error.code).toBe('INVALID_PATH');
      expect(real.json.error.code).toBe('INVALID_PATH');
    }
    expect(session.project.snapshot()).toEqual(before);
  });

  it('refuses a rewind of some files, or a revert, whose plan changed since its dry run with 409 PLAN_CHANGED, changing nothing', async () => {
    const session = await twoTurnSession();
    const { post } = await serve(session);
    const paths = [session.project.file('a.txt')];
    const rewindPlan = (await post('rewind', { checkpointId: session.first, paths, dryRun: true })).json.plan;
    const revertPlan = (await post('revert', { checkpointId: session.first, dryRun: true })).json.plan;
    // One line for one line: the counts stay the same, the bytes a rewind removes do not.
    session.project.write('a.txt', 'alpha, edited by hand\n');
    session.project.write('config.ts', configBefore.replace('port = 80', 'port = 8080').replace('"localhost"', '"::"'));
    const edited = session.project.snapshot();

    const rewind = await post('rewind', { checkpointId: session.first, paths, plan: rewindPlan });
    const revert = await post('revert', { checkpointId: session.first, plan: revertPlan });

    expect([rewind.status, rewind.json.error.code]).toEqual([409, 'PLAN_CHANGED']);
    expect([revert.status, revert.json.error.code]).toEqual([409, 'PLAN_CHANGED']);
    expect(session.project.snapshot()).toEqual(edited);
  });

  it('refuses a hunk whose file changed since its diff with HUNK_NOT_FOUND, changing nothing', async () => {
    const session = await twoTurnSession();
    const { server, post } = await serve(session);
    const [firstHunk] = await hunkIdsOf(server, session, 'notes.txt');
    session.project.write('notes.txt', `${notesAfter}line 13\n`);
    const edited = session.project.snapshot();

    const answer = await post('rewind', { checkpointId: session.first, hunks: [firstHunk], dryRun: true });

    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: 'HUNK_NOT_FOUND', details: { hunk: firstHunk } });
    expect(answer.json.error.message).toContain('Open the diff again');
    expect(session.project.snapshot()).toEqual(edited);
  });

  it('refuses paths with hunks, a selection with the conversation, and an unknown conflict choice, with INVALID_OPTIONS', async () => {
    const session = await twoTurnSession();
    const { server, post } = await serve(session);
    const [firstHunk] = await hunkIdsOf(server, session, 'notes.txt');
    const paths = [session.project.file('a.txt')];

    const both = await post('rewind', { checkpointId: session.first, paths, hunks: [firstHunk], dryRun: true });
    const scope = await post('rewind', { checkpointId: session.first, paths, scope: 'both', dryRun: true });
    const choice = await post('revert', { checkpointId: session.first, onConflict: 'merge', dryRun: true });
    const dryRun = await post('rewind', { checkpointId: session.first, paths, dryRun: 'yes' });

    expect(both.json.error).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(scope.json.error).toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'scope' } });
    expect(choice.json.error).toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'onConflict' } });
    expect(dryRun.json.error).toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'dryRun' } });
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('takes a revert only by a same-origin POST, like a rewind', async () => {
    const session = await twoTurnSession();
    const { server, base } = await serve(session);
    const body = JSON.stringify({ checkpointId: session.first, dryRun: true });

    const byGet = await httpRequest(server.port, `${base}/revert`);
    const crossSite = await httpRequest(server.port, `${base}/revert`, { method: 'POST', headers: { origin: 'http://evil.example', 'content-type': 'application/json' }, body });

    expect([byGet.status, byGet.json.error.code]).toEqual([405, 'METHOD_NOT_ALLOWED']);
    expect([crossSite.status, crossSite.json.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });
});
