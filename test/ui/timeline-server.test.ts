import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeProjectKey, RewindableError, RewindableErrorCode } from '../../src/index.js';
import { startTimelineServer, type TimelineServer } from '../../src/ui/timeline-server.js';
import { promptedSession, type PromptedSession } from '../mcp/helpers/prompted-session.js';
import { httpRequest, sameOriginPost } from './helpers/http-request.js';

const servers: TimelineServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close();
});

async function serve(session: PromptedSession): Promise<TimelineServer> {
  const server = await startTimelineServer({ cwd: session.project.root, storeDir: session.project.store });
  servers.push(server);
  return server;
}

/** Bytes sent as they are, for a request no HTTP client would send (no Host header); answers all it reads. */
function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** The plan digest of a checkpoint's preview now: what the page sends back with the rewind the user confirmed. */
async function planOf(server: TimelineServer, session: PromptedSession, checkpointId: string): Promise<string> {
  const preview = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}/checkpoints/${checkpointId}/preview`);
  return preview.json.plan as string;
}

describe('startTimelineServer: endpoints', () => {
  it('lists the sessions, newest first, with their first prompt and counts', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const answer = await httpRequest(server.port, `/${server.token}/api/sessions`);

    expect(answer.status).toBe(200);
    expect(answer.json.sessions).toHaveLength(1);
    expect(answer.json.sessions[0]).toMatchObject({ sessionId: session.sessionId, checkpoints: 2, trackedFiles: 4, firstPrompt: expect.stringContaining('Add a farewell function') });
  });

  it('lists a damaged session as damaged, and answers its timeline with LOG_CORRUPT', async () => {
    const session = await promptedSession();
    const log = path.join(session.project.store, 'projects', encodeProjectKey(session.project.root), `${session.sessionId}.jsonl`);
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"type"', '"tipe"'); // the second line no longer matches its checksum
    fs.writeFileSync(log, lines.join('\n'));
    const server = await serve(session);

    const list = await httpRequest(server.port, `/${server.token}/api/sessions`);
    const timeline = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}`);

    expect(list.json.sessions[0]).toMatchObject({ sessionId: session.sessionId, damaged: { code: 'LOG_CORRUPT' } });
    expect(timeline.status).toBe(500);
    expect(timeline.json.error.code).toBe('LOG_CORRUPT');
  });

  it("answers a session's timeline: its checkpoints in order with prompts and the files each turn touched", async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const answer = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}`);

    expect(answer.status).toBe(200);
    expect(answer.json.checkpoints.map((checkpoint: { id: string }) => checkpoint.id)).toEqual([session.first, session.second]);
    expect(answer.json.checkpoints[0].touched).toEqual([session.project.file('src/farewell.ts'), session.project.file('src/greet.ts')].sort());
    expect(answer.json.checkpoints[1].prompt).toBe('Remove the README and make run.sh executable');
  });

  it("previews a rewind per file, and gives one tracked file's patch", async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const base = `/${server.token}/api/sessions/${session.sessionId}/checkpoints/${session.first}`;

    const preview = await httpRequest(server.port, `${base}/preview`);
    const greet = session.project.file('src/greet.ts');
    const diff = await httpRequest(server.port, `${base}/diff?path=${encodeURIComponent(greet)}`);

    expect(preview.json.counts).toEqual({ files: 4, insertions: 4, deletions: 2, conflicts: 0, leftAlone: 0 });
    expect(preview.json.files.find((file: { path: string }) => file.path === greet)).toMatchObject({ action: 'restore', insertions: 1, deletions: 1 });
    expect(preview.json.files[0].patch).toBeUndefined();
    expect(diff.json.file.patch).toContain('-  return `Hello, ${name}!`;\n+  return `Hello, ${name}`;');
  });

  it('rewinds with a same-origin POST, answers the CLI report, and undoes it', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const base = `/${server.token}/api/sessions/${session.sessionId}`;

    const rewind = await httpRequest(server.port, `${base}/rewind`, sameOriginPost(server.port, { checkpointId: session.first, scope: 'files', plan: await planOf(server, session, session.first) }));

    expect(rewind.status).toBe(200);
    expect(rewind.json.report[0]).toBe(`Files rewound to state at message ${session.first}`);
    expect(rewind.json.report).toContain('The rewind changed 4 files (+4 -2):');
    expect(session.project.snapshot()).toEqual(session.atFirst);

    const undo = await httpRequest(server.port, `${base}/undo`, sameOriginPost(server.port, { undoCheckpointId: rewind.json.undoCheckpointId }));

    expect(undo.status).toBe(200);
    expect(undo.json.report[0]).toBe(`Files rewound to state at undo point ${rewind.json.undoCheckpointId}`);
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('rewinds the conversation too when asked, and the timeline then shows the branch it left', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const base = `/${server.token}/api/sessions/${session.sessionId}`;

    const rewind = await httpRequest(server.port, `${base}/rewind`, sameOriginPost(server.port, { checkpointId: session.second, scope: 'both', plan: await planOf(server, session, session.second) }));
    const timeline = await httpRequest(server.port, base);

    expect(rewind.json.conversationLeaf).toBe(session.first);
    expect(rewind.json.report.at(-1)).toBe(`Conversation rewound to just before message ${session.second}: 1 message left on the active branch; the old branch stays readable.`);
    expect(session.project.snapshot()).toEqual(session.atSecond);
    const byId = Object.fromEntries(timeline.json.checkpoints.map((checkpoint: { id: string; onActiveBranch: boolean }) => [checkpoint.id, checkpoint.onActiveBranch]));
    expect(byId[session.first]).toBe(true);
    expect(byId[session.second]).toBe(false);
    expect(timeline.json.branches).toHaveLength(1);
    expect(timeline.json.branches[0].userMessages.map((message: { uuid: string }) => message.uuid)).toEqual([session.first, session.second]);
  });

  it('refuses a rewind whose plan changed since the preview, changing nothing, and rewinds once the new plan is sent', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const base = `/${server.token}/api/sessions/${session.sessionId}`;
    const shown = await planOf(server, session, session.second);
    // The agent works on after the preview was drawn: a file the confirmed plan does not know of.
    const agent = await session.project.open({ session: { resume: session.sessionId } });
    await agent.tools.write({ file_path: 'later.txt', content: 'written after the preview\n' });
    await agent.close();
    const afterAgent = session.project.snapshot();

    const stale = await httpRequest(server.port, `${base}/rewind`, sameOriginPost(server.port, { checkpointId: session.second, plan: shown }));

    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('PLAN_CHANGED');
    expect(session.project.snapshot()).toEqual(afterAgent);
    const fresh = await httpRequest(server.port, `${base}/checkpoints/${session.second}/preview`);
    expect(fresh.json.plan).not.toBe(shown);
    expect(fresh.json.files.map((file: { path: string; action: string }) => [file.path, file.action])).toContainEqual([session.project.file('later.txt'), 'delete']);

    const confirmed = await httpRequest(server.port, `${base}/rewind`, sameOriginPost(server.port, { checkpointId: session.second, plan: fresh.json.plan }));

    expect(confirmed.status).toBe(200);
    expect(session.project.snapshot()).toEqual(session.atSecond);
  });

  it('gives the same plan for the same files, and a new one when an edit keeps the line counts', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const before = await planOf(server, session, session.first);
    expect(await planOf(server, session, session.first)).toBe(before);

    // One line for one line: the counts the dialog shows stay the same, the bytes a rewind removes do not.
    session.project.write('src/greet.ts', 'export function greet(name: string) {\n  return `Hi, ${name}!`;\n}\n');

    expect(await planOf(server, session, session.first)).not.toBe(before);
  });

  it('refuses a rewind without the plan the user confirmed, with INVALID_OPTIONS', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const answer = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}/rewind`, sameOriginPost(server.port, { checkpointId: session.first }));

    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'plan' } });
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it("undoes to an undo point only, never to a user message's checkpoint", async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const answer = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}/undo`, sameOriginPost(server.port, { undoCheckpointId: session.first }));

    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatchObject({ code: 'INVALID_OPTIONS', details: { option: 'undoCheckpointId' } });
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('redirects the address without its trailing slash to the page', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const answer = await httpRequest(server.port, `/${server.token}`);

    expect(answer.status).toBe(308);
    expect(answer.headers.location).toBe(`/${server.token}/`);
  });

  it('serves the page, its script and its style', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const page = await httpRequest(server.port, `/${server.token}/`);
    const script = await httpRequest(server.port, `/${server.token}/timeline-page.js`);
    const style = await httpRequest(server.port, `/${server.token}/timeline.css`);

    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<script type="module" src="timeline-page.js">');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
  });
});

describe('startTimelineServer: security', () => {
  it('listens on 127.0.0.1 only, and refuses to bind any other address', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    expect(server.url).toBe(`http://127.0.0.1:${server.port}/${server.token}/`);
    const named = await startTimelineServer({ cwd: session.project.root, storeDir: session.project.store, host: 'localhost' });
    servers.push(named);
    expect(named.url).toBe(`http://127.0.0.1:${named.port}/${named.token}/`);
    expect((await httpRequest(named.port, `/${named.token}/api/sessions`)).status).toBe(200);
    await expect(startTimelineServer({ cwd: session.project.root, storeDir: session.project.store, host: '0.0.0.0' as '127.0.0.1' })).rejects.toSatisfy((error) =>
      RewindableError.hasCode(error, RewindableErrorCode.INVALID_OPTIONS),
    );
  });

  it('refuses a request without the token, or with a wrong one', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const wrong = `${server.token.slice(0, -1)}${server.token.endsWith('A') ? 'B' : 'A'}`;

    for (const target of ['/api/sessions', '/', `/${wrong}/api/sessions`, `/${wrong}/`, `/${wrong}/timeline-page.js`]) {
      const answer = await httpRequest(server.port, target);
      expect(answer.status).toBe(403);
      expect(answer.json.error.code).toBe('FORBIDDEN');
      expect(answer.body).not.toContain(session.sessionId);
    }
  });

  it('leaves a request without Host to Node, which answers 400 with an empty body', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    const answer = await rawRequest(server.port, `GET /${server.token}/api/sessions HTTP/1.1\r\nConnection: close\r\n\r\n`);

    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    // Whatever framing Node gives it, the body holds no JSON and nothing of the sessions.
    expect(answer.split('\r\n\r\n').slice(1).join('').replace(/^0\r?\n?/, '')).toBe('');
  });

  it('refuses a forged Host (DNS rebinding), even with the token', async () => {
    const session = await promptedSession();
    const server = await serve(session);

    for (const host of [`attacker.example:${server.port}`, '127.0.0.1:1', `127.0.0.1.nip.io:${server.port}`]) {
      const answer = await httpRequest(server.port, `/${server.token}/api/sessions`, { headers: { host } });
      expect(answer.status).toBe(403);
      expect(answer.json.error.code).toBe('FORBIDDEN');
    }
    const loopback = await httpRequest(server.port, `/${server.token}/api/sessions`, { headers: { host: `localhost:${server.port}` } });
    expect(loopback.status).toBe(200);
  });

  it('refuses a rewind from another origin, and changes nothing', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const target = `/${server.token}/api/sessions/${session.sessionId}/rewind`;
    const body = JSON.stringify({ checkpointId: session.first });

    const attempts: Array<Record<string, string>> = [
      { origin: 'https://attacker.example', 'content-type': 'application/json' },
      { origin: `http://127.0.0.1:${server.port + 1}`, 'content-type': 'application/json' },
      { origin: 'null', 'content-type': 'application/json' },
      { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
      { origin: `http://127.0.0.1:${server.port}`, 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' },
      // No Origin and no Sec-Fetch-Site: nothing says the page sent it.
      { 'content-type': 'application/json' },
    ];
    for (const headers of attempts) {
      const answer = await httpRequest(server.port, target, { method: 'POST', headers, body });
      expect(answer.status).toBe(403);
      expect(answer.json.error.code).toBe('FORBIDDEN');
    }
    // A form post (no JSON) from the page's own origin is no rewind either.
    const form = await httpRequest(server.port, target, { method: 'POST', headers: { origin: `http://127.0.0.1:${server.port}`, 'content-type': 'text/plain' }, body });
    expect(form.status).toBe(415);
    for (const contentType of ['application/jsonx', 'application/json-patch+json', 'application/json5; charset=utf-8']) {
      const lookalike = await httpRequest(server.port, target, { method: 'POST', headers: { origin: `http://127.0.0.1:${server.port}`, 'content-type': contentType }, body });
      expect(lookalike.status).toBe(415);
      expect(lookalike.json.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('refuses a rewind or an undo by GET, and a POST to a reading endpoint', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const base = `/${server.token}/api/sessions/${session.sessionId}`;

    const get = await httpRequest(server.port, `${base}/rewind?checkpointId=${session.first}`);
    const undo = await httpRequest(server.port, `${base}/undo`);
    const post = await httpRequest(server.port, base, sameOriginPost(server.port, {}));

    for (const answer of [get, undo, post]) {
      expect(answer.status).toBe(405);
      expect(answer.json.error.code).toBe('METHOD_NOT_ALLOWED');
    }
    expect(session.project.snapshot()).toEqual(session.atEnd);
  });

  it('refuses ids that are not UUIDs with INVALID_ID', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const base = `/${server.token}/api/sessions`;

    const answers = [
      await httpRequest(server.port, `${base}/..%2F..%2Fetc`),
      await httpRequest(server.port, `${base}/${session.sessionId}/checkpoints/not-a-uuid/preview`),
      await httpRequest(server.port, `${base}/${session.sessionId}/rewind`, sameOriginPost(server.port, { checkpointId: '../x' })),
    ];

    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe('INVALID_ID');
    }
    const malformed = await httpRequest(server.port, `${base}/%E0%A4%A`);
    expect(malformed.status).toBe(404);
    expect(malformed.json.error.code).toBe('NOT_FOUND');
  });

  it('refuses to diff a path the session does not track, with INVALID_PATH', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const secret = session.project.write('secret.txt', 'not tracked\n');
    fs.writeFileSync(`${session.project.outside}/passwd`, 'outside\n');
    const base = `/${server.token}/api/sessions/${session.sessionId}/checkpoints/${session.first}/diff`;

    for (const asked of [secret, `${session.project.outside}/passwd`, session.project.file('src'), session.project.file('src/*.ts'), 'src/greet.ts', `${session.project.root}/src/../src/greet.ts`]) {
      const answer = await httpRequest(server.port, `${base}?path=${encodeURIComponent(asked)}`);
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe('INVALID_PATH');
      expect(answer.body).not.toContain('not tracked');
    }
  });

  it('answers the diff of a file whose directory became a link out of the project with why it is left alone, naming nothing outside', async () => {
    const session = await promptedSession();
    const agent = await session.project.open({ session: { resume: session.sessionId } });
    const third = await agent.checkpoint();
    fs.mkdirSync(session.project.file('sub'));
    await agent.tools.write({ file_path: 'sub/x.txt', content: 'the agent wrote this\n' });
    await agent.close();
    fs.writeFileSync(`${session.project.outside}/x.txt`, 'outside the project\n');
    fs.rmSync(session.project.file('sub'), { recursive: true });
    fs.symlinkSync(session.project.outside, session.project.file('sub'));
    const server = await serve(session);

    const answer = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}/checkpoints/${third}/diff?path=${encodeURIComponent(session.project.file('sub/x.txt'))}`);

    expect(answer.status).toBe(200);
    expect(answer.json.file).toMatchObject({ path: session.project.file('sub/x.txt'), action: 'skip', reason: 'parent-changed' });
    expect(answer.body).not.toContain(session.project.outside);
    expect(answer.body).not.toContain('outside the project\\n');
  });

  it('answers a failure as JSON with the library error code', async () => {
    const session = await promptedSession();
    const server = await serve(session);
    const unknown = '3f0c2a8e-6a1b-4c4e-9f3e-2b7d5c1a9e40';

    const answer = await httpRequest(server.port, `/${server.token}/api/sessions/${session.sessionId}/checkpoints/${unknown}/preview`);

    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.json.error.code).toBe('CHECKPOINT_NOT_FOUND');
  });
});
