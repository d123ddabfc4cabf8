import { randomBytes } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { PageAssets } from './page-assets.js';
import { checkHost, checkMutation, checkRead, checkToken, RequestRefused, type Refused } from './request-guard.js';
import { revertTurn, rewindSelected } from './selective-api.js';
import { bodyFields, checkpointPreview, fileDiff, rewindTo, sessionsList, sessionTimeline, undoRewind } from './timeline-api.js';
import { TimelineSessions, type TimelineLocation } from './timeline-sessions.js';
import type { ErrorResponse } from './timeline-types.js';

export interface TimelineServerOptions extends TimelineLocation {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /**
   * Loopback address to bind: `127.0.0.1` or `::1`; `localhost` binds `127.0.0.1` (never whatever else the name
   * resolves to). Any other is refused: the server can rewrite files. @default '127.0.0.1'
   */
  host?: '127.0.0.1' | '::1' | 'localhost';
}

export interface TimelineServer {
  /** The page's address, token included: open it in a browser. */
  url: string;
  port: number;
  /** The random token every request must carry (it is the URL's first path segment). */
  token: string;
  /** Stops accepting requests, lets a rewind under way finish, and closes. */
  close(): Promise<void>;
}

/** A request body past this size is refused: the endpoints take ids, and a selection of files takes their paths. */
const maxBodyBytes = 8 * 1024 * 1024;

/**
 * Serves the timeline page of a project's sessions on the loopback
 * interface: sessions, checkpoints, rewind previews and diffs, rewind and
 * undo. Every request must carry the server's random token (the page's URL
 * holds it) and a Host naming the loopback address; rewinds and undos also
 * come by POST from the page's own origin. Sessions are read and written
 * through the public API only, so any storage adapter works.
 * @example
 * const server = await startTimelineServer({ cwd: '/abs/project' });
 * console.log(`Timeline: ${server.url}`);
 * // later
 * await server.close();
 */
export async function startTimelineServer(options: TimelineServerOptions): Promise<TimelineServer> {
  const host = options.host ?? '127.0.0.1';
  if (!['127.0.0.1', '::1', 'localhost'].includes(host)) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `The timeline server binds to the loopback interface only, not ${JSON.stringify(host)}: it can rewrite files.`, {
      details: { option: 'host' },
    });
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Port ${JSON.stringify(options.port)} is not a port number (0 to 65535).`, { details: { option: 'port' } });
  }
  const sessions = new TimelineSessions({ ...options, cwd: path.resolve(options.cwd) });
  const token = randomBytes(24).toString('base64url');
  const assets = new PageAssets();
  const server = http.createServer((request, response) => {
    const listening = (server.address() as AddressInfo).port;
    void handle(request, response, { sessions, token, assets, port: listening }).catch((error: unknown) => sendError(response, error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host === 'localhost' ? '127.0.0.1' : host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const hostName = host === '::1' ? '[::1]' : '127.0.0.1';
  return {
    url: `http://${hostName}:${bound}/${token}/`,
    port: bound,
    token,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await sessions.settled();
    },
  };
}

interface Context {
  sessions: TimelineSessions;
  token: string;
  assets: PageAssets;
  port: number;
}

async function handle(request: IncomingMessage, response: ServerResponse, context: Context): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const [given, ...rest] = url.pathname.split('/').slice(1);
  const refused = checkHost(request, context.port) ?? checkToken(given, context.token);
  if (refused !== undefined) return sendRefusal(response, refused);
  // The page's assets are relative to its address: without the slash they would resolve outside the token.
  if (rest.length === 0) {
    const readOnly = checkRead(request);
    if (readOnly !== undefined) return sendRefusal(response, readOnly);
    response.writeHead(308, { location: `/${given}/`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    response.end();
    return;
  }
  const route = decodedSegments(rest);
  if (route === undefined) return sendRefusal(response, { status: 404, code: 'NOT_FOUND', message: 'The address is not valid percent-encoding.' });
  if (route[0] !== 'api') {
    const readOnly = checkRead(request);
    if (readOnly !== undefined) return sendRefusal(response, readOnly);
    const asset = context.assets.get(route.join('/'));
    if (asset === undefined) return sendRefusal(response, { status: 404, code: 'NOT_FOUND', message: `No page file ${url.pathname.slice(given!.length + 1)}.` });
    const { contentType, body } = await asset;
    return send(response, 200, contentType, body);
  }
  const [, collection, sessionId, part, checkpointId, view] = route;
  if (collection !== 'sessions') return sendRefusal(response, { status: 404, code: 'NOT_FOUND', message: `No endpoint ${url.pathname.slice(given!.length + 1)}.` });
  // A selective rewind's or a revert's dry run comes the same way: its selection can name every tracked file.
  const mutation = part === 'rewind' || part === 'undo' || part === 'revert';
  const method = mutation ? checkMutation(request, context.port) : checkRead(request);
  if (method !== undefined) return sendRefusal(response, method);
  const { sessions } = context;
  if (sessionId === undefined) return sendJson(response, await sessionsList(sessions));
  if (part === undefined) return sendJson(response, await sessionTimeline(sessions, sessionId));
  if (part === 'rewind') {
    const body = bodyFields(await readJson(request));
    const selective = body.paths !== undefined || body.hunks !== undefined || body.dryRun !== undefined;
    return sendJson(response, selective ? await rewindSelected(sessions, sessionId, body) : await rewindTo(sessions, sessionId, body));
  }
  if (part === 'revert') return sendJson(response, await revertTurn(sessions, sessionId, bodyFields(await readJson(request))));
  if (part === 'undo') return sendJson(response, await undoRewind(sessions, sessionId, await readJson(request)));
  if (part === 'checkpoints' && checkpointId !== undefined && view === 'preview') return sendJson(response, await checkpointPreview(sessions, sessionId, checkpointId));
  if (part === 'checkpoints' && checkpointId !== undefined && view === 'diff') return sendJson(response, await fileDiff(sessions, sessionId, checkpointId, url.searchParams.get('path')));
  return sendRefusal(response, { status: 404, code: 'NOT_FOUND', message: `No endpoint ${url.pathname.slice(given!.length + 1)}.` });
}

function decodedSegments(segments: readonly string[]): string[] | undefined {
  try {
    return segments.map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `The request body is over ${maxBodyBytes} bytes: the endpoints take ids and paths.`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'The request body is not JSON.', { cause: error });
  }
}

/** Headers on every answer: nothing is cached, framed, sniffed or sent as a referrer (the URL holds the token). */
function send(response: ServerResponse, status: number, contentType: string, body: Buffer | string): void {
  response.writeHead(status, {
    'content-type': contentType,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  });
  response.end(body);
}

function sendJson(response: ServerResponse, value: unknown, status = 200): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function sendRefusal(response: ServerResponse, refused: Refused): void {
  const body: ErrorResponse = { error: { code: refused.code, message: refused.message } };
  sendJson(response, body, refused.status);
}

/** A library error keeps its code; the HTTP status only says whose mistake it was. */
function sendError(response: ServerResponse, error: unknown): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  if (error instanceof RequestRefused) return sendRefusal(response, error.refused);
  if (!RewindableError.isInstance(error)) {
    const message = `Unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
    return sendJson(response, { error: { code: 'UNEXPECTED', message } } satisfies ErrorResponse, 500);
  }
  const body: ErrorResponse = { error: { code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) } };
  sendJson(response, body, statusOf(error.code));
}

function statusOf(code: RewindableErrorCode): number {
  if (code === 'SESSION_LOCKED') return 409;
  // A stale hunk id is the request's mistake (a diff older than the file), not a missing session or checkpoint.
  if (code.startsWith('INVALID_') || code === 'CHECKPOINT_IN_OTHER_SESSION' || code === 'PATH_OUTSIDE_PROJECT' || code === 'HUNK_NOT_FOUND') return 400;
  if (code.endsWith('_NOT_FOUND') || code === 'NO_CHECKPOINT') return 404;
  return 500;
}
