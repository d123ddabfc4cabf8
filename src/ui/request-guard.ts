import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The checks every request to the timeline server passes before any
 * endpoint runs. The server can rewrite the project's files, so a page of
 * another site must not drive it: not by a cross-site POST (CSRF), not by a
 * name of its own resolving to 127.0.0.1 (DNS rebinding), not by guessing.
 */

/** A request the guard refuses: the HTTP status and a sentence saying why. */
export interface Refused {
  status: number;
  code: 'FORBIDDEN' | 'NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'UNSUPPORTED_MEDIA_TYPE' | 'PLAN_CHANGED';
  message: string;
}

/** A refusal an endpoint finds once it has looked (a rewind whose plan changed), answered as the guard's are. */
export class RequestRefused extends Error {
  constructor(readonly refused: Refused) {
    super(refused.message);
    this.name = 'RequestRefused';
  }
}

/** Host names that reach this machine's loopback interface and no other. */
const loopbackNames = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The Host header must name the loopback address and this server's port. A
 * DNS-rebinding page talks to 127.0.0.1 under its own domain name, which its
 * requests carry in Host: that name is refused here.
 */
export function checkHost(request: IncomingMessage, port: number): Refused | undefined {
  const host = request.headers.host;
  if (host !== undefined && loopbackNames.some((name) => host.toLowerCase() === `${name}:${port}`)) return undefined;
  return { status: 403, code: 'FORBIDDEN', message: `The Host header ${JSON.stringify(host ?? '')} is not this server (127.0.0.1:${port}): open the URL the server printed.` };
}

/** The token, compared in constant time so its bytes cannot be found one at a time from response times. */
export function checkToken(given: string | undefined, token: string): Refused | undefined {
  const expected = Buffer.from(token);
  const actual = Buffer.from(given ?? '');
  if (actual.length === expected.length && timingSafeEqual(actual, expected)) return undefined;
  return { status: 403, code: 'FORBIDDEN', message: 'Missing or wrong token: open the URL the server printed, token included.' };
}

/**
 * A mutation must come from the page itself: a POST whose Origin is this
 * server's (a browser always sends Origin on a POST), or, when a client
 * sends no Origin, one the browser marks `Sec-Fetch-Site: same-origin`. Its
 * body must be JSON, which no HTML form can send without a preflight that
 * this server never answers.
 */
export function checkMutation(request: IncomingMessage, port: number): Refused | undefined {
  if (request.method !== 'POST') {
    return { status: 405, code: 'METHOD_NOT_ALLOWED', message: `${request.method ?? 'This method'} cannot change anything: rewinds and undos are POST requests.` };
  }
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  const sameOrigin = origin !== undefined ? loopbackNames.some((name) => origin.toLowerCase() === `http://${name}:${port}`) : site === 'same-origin';
  if (!sameOrigin || (site !== undefined && site !== 'same-origin')) {
    return { status: 403, code: 'FORBIDDEN', message: `A request from ${origin ?? 'another site'} cannot change files: only the timeline page itself can.` };
  }
  // The media type exactly, parameters aside: `application/jsonx` is not JSON.
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'A mutation takes a JSON body (Content-Type: application/json).' };
  }
  return undefined;
}

/** Reads requests only: GET and HEAD. */
export function checkRead(request: IncomingMessage): Refused | undefined {
  if (request.method === 'GET' || request.method === 'HEAD') return undefined;
  return { status: 405, code: 'METHOD_NOT_ALLOWED', message: `${request.method ?? 'This method'} is not allowed here: this address only reads.` };
}
