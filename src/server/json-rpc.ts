import type { z } from 'zod';
import { RewindableError } from '../errors.js';

/** The JSON-RPC 2.0 error codes the server answers with (https://www.jsonrpc.org/specification#error_object). */
export const ErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** A `RewindableError` of the library: `data.code` is its code. */
  rewindable: -32000,
} as const;

export type RequestId = string | number | null;

export interface ErrorObject {
  code: number;
  message: string;
  data?: { code: string; details?: unknown };
}

/** A request, or a notification when `id` is undefined (it gets no answer). */
export interface Request {
  id: RequestId | undefined;
  method: string;
  /** An object, an array, or undefined when left out. */
  params: unknown;
}

/** A failure of the protocol itself (not of the library): answered with its own code. */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: ErrorObject['data'],
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** Reads one line's JSON text as a request, or says why it is none (with the id, when one could be read). */
export function parseRequest(text: string): { request: Request } | { error: ErrorObject; id: RequestId } {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    return { error: { code: ErrorCode.parseError, message: `Parse error: ${(error as Error).message}. Send one JSON object per line.` }, id: null };
  }
  if (Array.isArray(message)) return { error: { code: ErrorCode.invalidRequest, message: 'Batches are not supported: send one request per line.' }, id: null };
  if (typeof message !== 'object' || message === null) return invalid('a request is a JSON object', null);
  const { jsonrpc, id, method, params } = message as Record<string, unknown>;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') return invalid('id must be a string, a number or null', null);
  const knownId = (id ?? null) as RequestId;
  if (jsonrpc !== '2.0') return invalid('jsonrpc must be "2.0"', knownId);
  if (typeof method !== 'string') return invalid('method must be a string', knownId);
  if (params !== undefined && (typeof params !== 'object' || params === null)) return invalid('params must be an object', knownId);
  return { request: { id: id as RequestId | undefined, method, params } };
}

function invalid(reason: string, id: RequestId): { error: ErrorObject; id: RequestId } {
  return { error: { code: ErrorCode.invalidRequest, message: `Invalid request: ${reason}.` }, id };
}

/** The answer for params a method's schema refuses: every issue, so a client can show them all. */
export function invalidParams(method: string, error: z.core.$ZodError): ProtocolError {
  const issues = error.issues.map((issue) => ({ path: issue.path.map(String), code: issue.code, message: issue.message }));
  const first = issues[0]!;
  const where = first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  // Only ids that are not UUIDs: the library's own code for them, so a client handles both alike.
  const onlyIds = error.issues.every((issue) => issue.code === 'invalid_format' && issue.format === 'uuid');
  return new ProtocolError(ErrorCode.invalidParams, `Invalid params for ${method}: ${where}${first.message}.`, { code: onlyIds ? 'INVALID_ID' : 'INVALID_OPTIONS', details: { issues } });
}

/** The error object for whatever a handler threw. */
export function errorObject(error: unknown): ErrorObject {
  if (error instanceof ProtocolError) return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
  if (RewindableError.isInstance(error)) {
    return { code: ErrorCode.rewindable, message: error.message, data: { code: error.code, ...(error.details !== undefined ? { details: jsonValue(error.details) } : {}) } };
  }
  return { code: ErrorCode.internalError, message: `Internal error: ${error instanceof Error ? error.message : String(error)}` };
}

/** `details` as JSON holds it (an `INVALID_ID`'s id may be any value a caller passed). */
function jsonValue(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return undefined;
  }
}
