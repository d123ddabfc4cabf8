/**
 * Tool calls on the same file run one after another. Each tool reads,
 * changes and replaces the whole file, so two at once would both start from
 * the old content and the second would silently undo the first. Keyed by
 * manager, so the bound tools and the standalone functions share the order.
 */
const queues = new WeakMap<object, Map<string, Promise<void>>>();

export async function withPathLock<T>(owner: object, filePath: string, task: () => Promise<T>): Promise<T> {
  let byPath = queues.get(owner);
  if (byPath === undefined) queues.set(owner, (byPath = new Map()));
  const previous = byPath.get(filePath) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  byPath.set(filePath, tail);
  try {
    return await run;
  } finally {
    if (byPath.get(filePath) === tail) byPath.delete(filePath);
  }
}
