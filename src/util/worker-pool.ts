import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, type TransferListItem } from 'node:worker_threads';

/** The entry that runs a worker module from the TypeScript sources (under tests); see its comment. */
const typescriptWorker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'typescript-worker.mjs');

/**
 * A few worker threads running one module of ours (see `serveTasks`),
 * started on first use and kept for the life of the process, but never
 * keeping it alive while idle. If the module is not there, or a worker fails
 * to start, errors or exits, the pool is given up for good and callers do the
 * work themselves: a pool is only ever a way to do it faster.
 */
export class WorkerPool<Message, Reply> {
  private workers: Array<TaskWorker<Message, Reply>> | 'unavailable' | undefined;

  /** `file`: the worker module (`.js`/`.cjs` as built; `.ts` from the sources, run through the dev loader). */
  constructor(
    private readonly file: string,
    readonly size: number,
  ) {}

  /** Whether the workers were started (or found unable to start): `get` starts nothing now. */
  get started(): boolean {
    return this.workers !== undefined;
  }

  /** The workers, started now if need be; undefined when they cannot run. */
  get(): ReadonlyArray<TaskWorker<Message, Reply>> | undefined {
    if (this.workers === undefined) {
      try {
        // A bundle of the library (one file, no worker module next to it) does the work on its own thread.
        if (!fs.existsSync(this.file)) throw new Error(`no worker module at ${this.file}`);
        const start = () => (this.file.endsWith('.ts') ? new Worker(typescriptWorker, { workerData: { typescriptWorker: this.file } }) : new Worker(this.file));
        this.workers = Array.from({ length: this.size }, () => new TaskWorker<Message, Reply>(start(), () => (this.workers = 'unavailable')));
      } catch {
        this.workers = 'unavailable';
      }
    }
    return this.workers === 'unavailable' ? undefined : this.workers;
  }
}

/** The body of a worker module: answers each message with `handle`'s reply, moving what it lists in `transfer`. */
export function serveTasks<Message, Reply>(handle: (message: Message) => { reply: Reply; transfer?: TransferListItem[] }): void {
  if (isMainThread || parentPort === null) throw new Error('serveTasks runs in a worker thread only.');
  const port = parentPort;
  port.on('message', ({ id, message }: { id: number; message: Message }) => {
    const { reply, transfer } = handle(message);
    port.postMessage({ id, reply }, transfer ?? []);
  });
}

/** One worker of a pool: a message in, a reply out, in order. */
export class TaskWorker<Message, Reply> {
  private readonly pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: unknown) => void }>();
  private nextId = 0;

  constructor(
    private readonly worker: Worker,
    onFailure: () => void,
  ) {
    worker.on('message', ({ id, reply }: { id: number; reply: Reply }) => {
      this.pending.get(id)?.resolve(reply);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
    });
    const fail = (error: unknown) => {
      onFailure();
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a worker thread exited with code ${code}`)));
    // Only after the listeners: adding a 'message' listener refs the worker again, and a worker
    // started but never sent a job would then keep the process from ever ending.
    worker.unref();
  }

  /** Messages sent and not yet answered. */
  get busy(): number {
    return this.pending.size;
  }

  run(message: Message, transfer: readonly TransferListItem[] = []): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref(); // an answer is awaited: the process must wait for it
      this.worker.postMessage({ id, message }, transfer);
    });
  }
}

/**
 * The worker module `name` of src/fs/workers, beside the code that asks:
 * `caller` is that code's `import.meta.url` (the CommonJS build turns it
 * into its own file's), whose extension the worker shares: `.ts` in the
 * sources, `.js` and `.cjs` as built, where the library's code sits at the
 * root of `dist` and its workers in `dist/workers`.
 */
export function workerModule(caller: string, name: string): string {
  const file = fileURLToPath(caller);
  return path.join(path.dirname(file), 'workers', `${name}${path.extname(file)}`);
}
