import { filesystemStorage, type StorageAdapter } from '../../src/index.js';

/**
 * The filesystem store, whose appends that carry the record of a tool's
 * write fail once `loseConnection()` was called, as a database connection
 * dropped between a tool's backup and the record of its write would. Other
 * appends (backups, checkpoints) go through until then and after.
 */
export function storeLosingWriteRecords(directory: string): { storage: StorageAdapter; loseConnection(): void; reconnect(): void } {
  const inner = filesystemStorage({ directory, durability: 'none' });
  let lost = false;
  const storage = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'append') {
        return (...args: Parameters<StorageAdapter['append']>) => {
          const [, entries] = args;
          if (lost && entries.some((entry) => JSON.stringify(entry).includes('"type":"write"'))) {
            return Promise.reject(new Error('the connection to the store was lost'));
          }
          return target.append(...args);
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...values: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    storage,
    loseConnection: () => (lost = true),
    reconnect: () => (lost = false),
  };
}
