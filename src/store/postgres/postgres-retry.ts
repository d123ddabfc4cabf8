import { RewindableError, RewindableErrorCode } from '../../errors.js';

/**
 * SQLSTATE classes and codes worth another attempt: the connection broke
 * (08, 57P0x: server shutting down or restarting), too many connections
 * (53300), or the server chose this transaction as a deadlock or
 * serialization victim (40001, 40P01). Anything else (bad input, missing
 * privileges) fails the same way every time.
 */
function isRetryableState(state: string): boolean {
  return state.startsWith('08') || state.startsWith('57P0') || state === '53300' || state === '40001' || state === '40P01';
}

const networkErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** True for failures of the connection rather than of the statement. */
export function isRetryable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return /^[0-9A-Z]{5}$/.test(code) ? isRetryableState(code) : networkErrorCodes.has(code);
  // node-postgres reports a dropped socket or a connect timeout with a bare Error.
  const message = error instanceof Error ? error.message : '';
  return /connection terminated|connection error|not queryable|timeout exceeded when trying to connect|connect timeout/i.test(message);
}

export interface RetryPolicy {
  /** Further attempts after a failed one. */
  retries: number;
  /** Wait before the first retry; each later one waits four times longer. */
  firstDelayMs: number;
}

/**
 * Runs `operation`, again after a connection failure. Every operation of the
 * adapter is safe to repeat: blobs are keyed by hash and each append carries
 * an id the server remembers, so an append whose acknowledgement was lost is
 * not applied twice.
 */
export async function withRetry<T>(policy: RetryPolicy, action: string, operation: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      if (RewindableError.isInstance(error)) throw error;
      if (attempt >= policy.retries || !isRetryable(error)) throw postgresError(action, error, attempt + 1);
      await new Promise((resolve) => setTimeout(resolve, policy.firstDelayMs * 4 ** attempt));
    }
  }
}

function postgresError(action: string, cause: unknown, attempts: number): RewindableError {
  const reason = cause instanceof Error ? cause.message || String((cause as { code?: unknown }).code ?? cause) : String(cause);
  const retryable = isRetryable(cause);
  return new RewindableError(
    RewindableErrorCode.STORE_IO,
    `PostgreSQL storage could not ${action}: ${reason}` +
      (retryable
        ? ` (${attempts} attempt${attempts === 1 ? '' : 's'}). Check that the server is reachable; the operation is safe to retry.`
        : '. Check the database user\'s privileges and the connection settings.'),
    { cause, details: { retryable } },
  );
}
