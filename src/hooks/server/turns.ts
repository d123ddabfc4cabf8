/**
 * One event at a time, in order of arrival: a server's events share its
 * sessions. A turn not reached within the event's own lock wait is given up,
 * as an event in its own process gives up on a session another process holds.
 */
export class Turns {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `task` with the time left of `waitMs` once the turns before it ended; rejects with `whenLate()` if that takes longer. */
  async run<T>(waitMs: number, task: (leftMs: number) => Promise<T>, whenLate: () => Error): Promise<T> {
    const previous = this.tail;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    this.tail = previous.then(() => mine);
    const started = Date.now();
    try {
      if (!(await endsWithin(previous, waitMs))) throw whenLate();
      return await task(Math.max(0, waitMs - (Date.now() - started)));
    } finally {
      done();
    }
  }

  /** Resolves once every turn taken so far has ended. */
  async idle(): Promise<void> {
    await this.tail;
  }
}

function endsWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]).finally(() => clearTimeout(timer));
}
