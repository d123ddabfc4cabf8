import { Worker, type TransferListItem } from 'node:worker_threads';

/**
 * A few worker threads running one piece of our own source text, started on
 * first use and kept for the life of the process, but never keeping it alive
 * while idle. The text must set `handle` (a function of the message that
 * returns `{ reply, transfer? }`); `require` is available to it. If a worker
 * fails to start, errors or exits, the pool is given up for good and callers
 * do the work themselves: a pool is only ever a way to do it faster.
 */
export class WorkerPool<Message, Reply> {
  private workers: Array<TaskWorker<Message, Reply>> | 'unavailable' | undefined;

  constructor(
    private readonly source: string,
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
        const text = `const { parentPort } = require('node:worker_threads');\n${this.source}\n` +
          `parentPort.on('message', ({ id, message }) => { const { reply, transfer } = handle(message); parentPort.postMessage({ id, reply }, transfer ?? []); });`;
        this.workers = Array.from({ length: this.size }, () => new TaskWorker<Message, Reply>(new Worker(text, { eval: true }), () => (this.workers = 'unavailable')));
      } catch {
        this.workers = 'unavailable';
      }
    }
    return this.workers === 'unavailable' ? undefined : this.workers;
  }
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
