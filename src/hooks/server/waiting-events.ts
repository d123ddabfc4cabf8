import type { BetweenFiles } from '../../capture/track-new-files.js';

/** Thrown into a session's early first scan to stop it: an event that does not need it is waiting. */
export class EarlyScanStopped extends Error {
  override readonly name = 'EarlyScanStopped';
}

interface WaitingEvent {
  sessionId: string;
  /** A Bash event: it needs its session's first scan, and would take it itself. */
  needsScan: boolean;
}

/**
 * The events a server has queued and not yet begun, for its sessions' early
 * first scans. A scan gives way to any of them (an Edit, a prompt, another
 * session's event), unless a Bash event of its own session waits too: that
 * one needs exactly this scan, and the events behind it would wait for it.
 */
export class WaitingEvents {
  private readonly events = new Set<WaitingEvent>();
  private arrived: (() => void) | undefined;

  /** Notes an event queued; the function returned notes it begun (or given up). */
  add(sessionId: string, needsScan: boolean): () => void {
    const event = { sessionId, needsScan };
    this.events.add(event);
    this.arrived?.();
    return () => this.events.delete(event);
  }

  /** True when the early first scan of `sessionId` is to stop, or not start, for a waiting event. */
  scanGivesWay(sessionId: string): boolean {
    let other = false;
    for (const event of this.events) {
      if (event.sessionId === sessionId && event.needsScan) return false;
      other = true;
    }
    return other;
  }

  /**
   * What the early first scan of `sessionId` calls before each file: throws
   * `EarlyScanStopped` when it is to give way. An event reaches the server
   * only while the scan awaits, between its batches of backups (16 MiB): that
   * is when the scan sees it (at most a batch after its walk of the project).
   * `holdAfterFiles` is for tests only: after that many files the scan waits
   * until some event is queued, so that event surely comes in the middle of it.
   */
  betweenFiles(sessionId: string, holdAfterFiles?: number): BetweenFiles {
    let files = 0;
    return () => {
      if (this.scanGivesWay(sessionId)) throw new EarlyScanStopped(`the early first scan of session ${sessionId} gave way to an event`);
      files += 1;
      if (files !== holdAfterFiles || this.events.size > 0) return undefined;
      return new Promise<void>((resolve) => (this.arrived = resolve)).then(() => {
        this.arrived = undefined;
      });
    };
  }
}
