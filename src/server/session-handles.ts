import { randomBytes } from 'node:crypto';
import type { CommandChanges } from '../capture/capture-scan.js';
import type { CheckpointManager } from '../checkpoint-manager.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { SerialQueue } from '../util/serial-queue.js';

/**
 * A `captureChanges` call held open across two requests: `scanBegin` starts
 * it, the client runs its command, `scanEnd` ends it.
 */
interface OpenScan {
  id: string;
  /** Ends the "command" captureChanges is waiting for. */
  end(): void;
  /** captureChanges' answer, once `end` is called. */
  changes: Promise<CommandChanges>;
}

/** One open session of the connection. */
interface SessionEntry {
  manager: CheckpointManager;
  /** The session's requests, answered in the order they came. */
  queue: SerialQueue;
  scan: OpenScan | undefined;
}

/** The sessions a connection has open, each by an opaque handle that lasts until `close`. */
export class SessionHandles {
  private readonly entries = new Map<string, SessionEntry>();

  add(manager: CheckpointManager): string {
    // Random, so a handle of an earlier server process names nothing here rather than another session.
    const handle = `session-${randomBytes(6).toString('hex')}`;
    this.entries.set(handle, { manager, queue: new SerialQueue(), scan: undefined });
    return handle;
  }

  /** Runs `work` on the session of `handle`, after its requests that came before. */
  run<T>(handle: string, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    const entry = this.entry(handle);
    return entry.queue.run(() => work(entry.manager));
  }

  /** Starts capturing what the client's command changes; resolves once the scope's "before" scan is taken. */
  scanBegin(handle: string, label: string | undefined): Promise<string> {
    const entry = this.entry(handle);
    return entry.queue.run(async () => {
      if (entry.scan !== undefined) {
        throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Scan ${entry.scan.id} of this session is still open: end it with scanEnd before starting another.`, {
          details: { option: 'scanId' },
        });
      }
      let started!: () => void;
      let end!: () => void;
      const commandStarted = new Promise<void>((resolve) => (started = resolve));
      const commandEnded = new Promise<void>((resolve) => (end = resolve));
      const capture = entry.manager.captureChanges(() => {
        started();
        return commandEnded;
      }, label !== undefined ? { label } : {});
      // captureChanges fails before it runs the command (no checkpoint yet, a read-only session ...) or starts it.
      await Promise.race([commandStarted, capture]);
      const scan: OpenScan = { id: `scan-${randomBytes(6).toString('hex')}`, end, changes: capture.then(({ changes }) => changes) };
      scan.changes.catch(() => {}); // surfaced by scanEnd, or by close
      entry.scan = scan;
      return scan.id;
    });
  }

  /** Ends the open scan: what the command created, modified and deleted. */
  scanEnd(handle: string, scanId: string): Promise<CommandChanges> {
    const entry = this.entry(handle);
    return entry.queue.run(async () => {
      if (entry.scan?.id !== scanId) {
        throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `No open scan ${JSON.stringify(scanId)} in this session: scanEnd takes the scanId its scanBegin returned.`, {
          details: { option: 'scanId' },
        });
      }
      return endScan(entry);
    });
  }

  /** Closes the session (recording an open scan's changes first) and forgets its handle. */
  close(handle: string): Promise<void> {
    const entry = this.entry(handle);
    this.entries.delete(handle);
    return entry.queue.run(async () => {
      try {
        if (entry.scan !== undefined) await endScan(entry);
      } finally {
        await entry.manager.close();
      }
    });
  }

  /** Closes every session, releasing their locks; the first failure is thrown once all are closed. */
  async closeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.entries.keys()].map((handle) => this.close(handle)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }

  private entry(handle: string): SessionEntry {
    const entry = this.entries.get(handle);
    if (entry === undefined) {
      throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Unknown session handle ${JSON.stringify(handle)}: open a session first; a handle lasts until close, on this connection only.`, {
        details: { option: 'handle' },
      });
    }
    return entry;
  }
}

async function endScan(entry: SessionEntry): Promise<CommandChanges> {
  const scan = entry.scan!;
  entry.scan = undefined;
  scan.end();
  return scan.changes;
}
