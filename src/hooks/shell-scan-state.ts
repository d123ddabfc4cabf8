import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ScopeSnapshot } from '../capture/capture-scan.js';
import { encodeProjectKey } from '../paths.js';

/** A scan state left by a shell call whose after-hook never came (the call was denied or interrupted) is swept after a day. */
const staleAfterMs = 24 * 60 * 60 * 1000;

/** What the after-hook needs of the scan before its command. */
export type ScanBefore = Pick<ScopeSnapshot, 'startedAtNs' | 'signatures' | 'rules' | 'leftOut'>;

/**
 * The scan a before-hook took, kept for the after-hook of the same tool call
 * (another process): when it started, which the after-scan needs to tell a
 * file the command created (a rewind deletes it) from one that was there
 * before, as `captureChanges` knows in one process; and the stat signatures,
 * which say what the command created, modified and deleted. Flushed before
 * the before-hook returns, as a backup is.
 *
 *   <store>/hooks/<project key>/<session id>/<hash of the tool use id>.json
 */
export class ShellScanState {
  private readonly directory: string;

  constructor(storeDir: string, root: string, sessionId: string) {
    this.directory = path.join(storeDir, 'hooks', encodeProjectKey(root), sessionId);
  }

  save(toolUseId: string, snapshot: ScopeSnapshot): void {
    fs.mkdirSync(this.directory, { recursive: true });
    this.sweep();
    const file = this.fileOf(toolUseId);
    const text = JSON.stringify({ startedAtNs: snapshot.startedAtNs.toString(), rules: snapshot.rules, leftOut: snapshot.leftOut, signatures: [...snapshot.signatures] });
    const fd = fs.openSync(`${file}.tmp`, 'w');
    try {
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(`${file}.tmp`, file);
  }

  /** The before-scan of the call, taken away; undefined when there is none (no before-hook ran for it). */
  take(toolUseId: string): ScanBefore | undefined {
    const file = this.fileOf(toolUseId);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const stored = JSON.parse(text) as { startedAtNs: string; rules: string; leftOut: string[]; signatures: Array<[string, string]> };
      return { startedAtNs: BigInt(stored.startedAtNs), rules: stored.rules, leftOut: stored.leftOut, signatures: new Map(stored.signatures) };
    } catch {
      return undefined;
    }
  }

  /** Once the after-scan is recorded. */
  remove(toolUseId: string): void {
    fs.rmSync(this.fileOf(toolUseId), { force: true });
  }

  private fileOf(toolUseId: string): string {
    return path.join(this.directory, `${createHash('sha256').update(toolUseId).digest('hex').slice(0, 32)}.json`);
  }

  private sweep(): void {
    const cutoff = Date.now() - staleAfterMs;
    for (const name of fs.readdirSync(this.directory)) {
      const file = path.join(this.directory, name);
      try {
        if (fs.lstatSync(file).mtimeMs < cutoff) fs.rmSync(file, { force: true });
      } catch {
        // Gone already.
      }
    }
  }
}
