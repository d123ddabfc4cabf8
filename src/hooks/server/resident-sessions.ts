import fs from 'node:fs';
import path from 'node:path';
import { ScopeJournal } from '../../capture/journal/scope-journal.js';
import type { BetweenFiles } from '../../capture/track-new-files.js';
import { rewindableSessionIdOf } from '../agent-session-id.js';
import { captureScope } from '../capture-scope.js';
import { proceed } from '../hook-answer.js';
import { openHookSession, retryWhileLocked, type HookSession } from '../hook-session.js';
import { handleEvent, type HandledEvent, type RunHookOptions } from '../run-hook.js';
import type { HookAnswer } from '../hook-answer.js';
import { EarlyScanStopped } from './waiting-events.js';

/** Sessions kept open at once; the least recently used is closed beyond this (an agent rarely has more than a few). */
const maximumOpen = 8;

interface Resident {
  opened: HookSession;
  /** The identity of the session's log and pack when this server last let go of its lock. */
  seen: string;
}

/**
 * The sessions of one project kept open between hook events, with what the
 * capture scope's last scan found, so the next scan walks only what changed.
 * The lock is held only while an event is handled: between events any other
 * process (a rewind, a manager) may open the session. When its log or pack
 * changed meanwhile, the session is opened again from disk before the
 * event; otherwise the memory is exactly what the disk says.
 */
export class ResidentSessions {
  private readonly residents = new Map<string, Resident>();

  /** Sessions whose first prompt was just checkpointed, with the options of that event: their first scan is due (see `scanEarly`). */
  private readonly earlyScansDue = new Map<string, RunHookOptions>();

  /**
   * The `HookRunner` of a server: the event's work in its kept session, answered once it is durable.
   * With `earlyScan`, a prompt that leaves its session without a scan marks the session's first scan due.
   */
  async run(event: HandledEvent, options: RunHookOptions, earlyScan = false): Promise<HookAnswer> {
    const sessionId = rewindableSessionIdOf(event.sessionId);
    const opened = await this.acquire(sessionId, options);
    try {
      await handleEvent(opened, event, options.storeDir);
    } catch (error) {
      // What the failed event left in memory is not trusted: the next event reads the disk.
      await this.drop(sessionId);
      throw error;
    }
    const resident = this.residents.get(sessionId)!;
    resident.seen = identityOf(opened);
    if (earlyScan && event.kind === 'prompt' && opened.session.state.lastScanStartedAtNs === undefined && opened.journal?.enabled === true) {
      this.earlyScansDue.set(sessionId, options);
    }
    await opened.session.unlock();
    return proceed;
  }

  /** The sessions whose first scan is due, taken: the server runs each in a turn of its own once the prompt is answered. */
  takeEarlyScans(): Array<{ sessionId: string; options: RunHookOptions }> {
    const due = [...this.earlyScansDue].map(([sessionId, options]) => ({ sessionId, options }));
    this.earlyScansDue.clear();
    return due;
  }

  /** The session's first scan gave way to an event: it is due again, taken once that event is answered. */
  scanEarlyLater(sessionId: string, options: RunHookOptions): void {
    this.earlyScansDue.set(sessionId, options);
  }

  /**
   * The session's first scan, ahead of its first shell command (see
   * `scanEarly`), under the lock as an event's work is. Nothing is answered to
   * anyone: when the session is locked by another process, or the scan fails,
   * it is left to the first Bash hook, as without it (`left`). Stopped by
   * `betweenFiles` (`stopped`), it is due again (see `scanEarlyLater`). A
   * scan stopped or failed, or a server killed in the middle, leaves at most
   * blobs no record names (the scan appends its records once, at its end);
   * the session is then read again from disk, finds no scan, and scans again.
   */
  async scanEarly(sessionId: string, options: RunHookOptions, betweenFiles?: BetweenFiles): Promise<'scanned' | 'stopped' | 'left'> {
    let opened: HookSession;
    try {
      opened = await this.acquire(sessionId, options);
    } catch {
      return 'left';
    }
    let scanned: boolean;
    try {
      scanned = await (await import('../shell-hook.js')).scanEarly(opened, betweenFiles);
    } catch (error) {
      // Not kept in memory: that session would count the blobs the scan stored as kept, though no record names them
      // (a clean-up may remove such a blob), and its journal as started. Read from disk, it trusts only its records.
      await this.drop(sessionId);
      if (!(error instanceof EarlyScanStopped)) return 'left';
      this.scanEarlyLater(sessionId, options);
      return 'stopped';
    }
    this.residents.get(sessionId)!.seen = identityOf(opened);
    await opened.session.unlock();
    return scanned ? 'scanned' : 'left';
  }

  get size(): number {
    return this.residents.size;
  }

  /** Closes every session (their locks are let go already between events) and the store's open files. */
  async closeAll(): Promise<void> {
    for (const sessionId of [...this.residents.keys()]) await this.drop(sessionId);
  }

  private async acquire(sessionId: string, options: RunHookOptions): Promise<HookSession> {
    const kept = this.residents.get(sessionId);
    if (kept !== undefined) {
      // Most recently used last.
      this.residents.delete(sessionId);
      this.residents.set(sessionId, kept);
      await retryWhileLocked(options.lockWaitMs, () => kept.opened.session.relock());
      if (identityOf(kept.opened) === kept.seen) {
        try {
          await kept.opened.recover();
          return kept.opened;
        } catch (error) {
          await this.drop(sessionId);
          throw error;
        }
      }
      // Written by another process since (a rewind, another manager): read again from disk.
      await this.drop(sessionId);
    }
    const opened = await openHookSession({ project: options.project!, storeDir: options.storeDir, sessionId, extraRoots: options.extraRoots, lockWaitMs: options.lockWaitMs });
    // Kept open between events, the session can follow the scope with a file watcher: scans examine only what changed.
    opened.journal = new ScopeJournal(opened.session.root, captureScope(opened).include);
    this.residents.set(sessionId, { opened, seen: '' });
    while (this.residents.size > maximumOpen) await this.drop(this.residents.keys().next().value!);
    return opened;
  }

  private async drop(sessionId: string): Promise<void> {
    const resident = this.residents.get(sessionId);
    if (resident === undefined) return;
    this.residents.delete(sessionId);
    resident.opened.journal?.stop();
    await resident.opened.close().catch(() => undefined);
  }
}

/** The identity of the session's log and pack: any append, replacement or truncation by anyone changes it. */
function identityOf({ session, storage }: HookSession): string {
  const key = session.log.key;
  const files = [storage.logPath(key), path.join(storage.directory, 'blobs', 'packs', key.projectKey, `${key.sessionId}.pack`)];
  return files
    .map((file) => {
      try {
        const stat = fs.lstatSync(file, { bigint: true });
        return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
      } catch {
        return 'none';
      }
    })
    .join(' ');
}
