import type { StorageAdapter } from '../store/storage-adapter.js';

export interface FaultyStorage extends StorageAdapter {
  /**
   * While true, every call rejects at once, before reaching the wrapped
   * store, as a call to an unreachable server would.
   */
  down: boolean;
  /**
   * The next `count` appends reach the wrapped store and are applied, then
   * reject as if the acknowledgement had been lost on the way back.
   */
  loseAcknowledgements(count: number): void;
  /** How many times each method was called. */
  readonly calls: Readonly<Record<string, number>>;
}

/**
 * Wraps an adapter so a test can take it down and lose acknowledgements, to
 * check how code above it (a mirror, a harness) survives an unreliable remote.
 *
 * @example
 * const remote = faultyStorage(memoryStorage());
 * const storage = mirroredStorage({ local: memoryStorage(), remote });
 * remote.down = true;   // the session keeps working locally
 * remote.down = false;  // the mirror catches up
 * await storage.flush();
 */
export function faultyStorage(inner: StorageAdapter): FaultyStorage {
  const calls: Record<string, number> = {};
  let acknowledgementsToLose = 0;
  const unreachable = (method: string) =>
    Object.assign(new Error(`faulty storage: ${method} failed, the store is down`), { code: 'ECONNREFUSED' });

  const wrapper = {
    specificationVersion: 'v2' as const,
    down: false,
    calls,
    loseAcknowledgements(count: number) {
      acknowledgementsToLose = count;
    },
  } as FaultyStorage;

  const methods = ['append', 'load', 'listSessions', 'delete', 'putBlobs', 'getBlob', 'hasBlobs', 'listProjects', 'collectGarbage', 'lock', 'close'] as const;
  for (const method of methods) {
    const original = inner[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (original === undefined) continue;
    (wrapper as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      calls[method] = (calls[method] ?? 0) + 1;
      if (wrapper.down && method !== 'close') throw unreachable(method);
      const result = await original.apply(inner, args);
      if (method === 'append' && acknowledgementsToLose > 0) {
        acknowledgementsToLose -= 1;
        throw Object.assign(new Error('faulty storage: the connection dropped before append was acknowledged'), { code: 'ECONNRESET' });
      }
      return result;
    };
  }
  return wrapper;
}
