import fs from 'node:fs';
import path from 'node:path';
import { RewindableError, storeIoError } from '../../errors.js';
import { flushDirectory, flushFileData, writeAll } from '../../fs/flush.js';
import type { SessionKey, StoreEntry } from '../storage-adapter.js';
import { flushCreatedDirectories } from './created-directories.js';
import { parseLog } from './log-lines.js';
import { projectFolder } from './project-folders.js';
import { openStoreFile, readAndClose } from './store-file.js';

/**
 * One session log open for appending. Its length is kept here rather than
 * asked of the file before every append; after a failed flush the data may be
 * lost, so nothing more is appended until the session is reopened.
 */
export class LogAppender {
  private failure: unknown;

  constructor(
    private readonly fd: number,
    private length: number,
  ) {}

  assertUsable(): void {
    if (this.failure !== undefined) throw storeIoError('append to the session log (an earlier flush failed; reopen the session)', this.failure);
  }

  /** Writes whole lines and returns where they start; a partial line is cut off again. */
  write(bytes: Buffer): number {
    const before = this.length;
    try {
      writeAll(this.fd, bytes);
      this.length += bytes.length;
    } catch (error) {
      this.cutBack(before, error);
      throw error;
    }
    return before;
  }

  async flush(): Promise<void> {
    try {
      await flushFileData(this.fd);
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /** Cuts the log back to `length`: lines the caller was told failed must not be found on reopening either. */
  cutBack(length: number, reason: unknown): void {
    try {
      fs.ftruncateSync(this.fd, length);
      this.length = length;
    } catch {
      this.failure ??= reason;
    }
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** Session logs, `projects/<project key>/<session id>.jsonl`: opened for appending once, read whole, never through a link. */
export class LogFiles {
  private readonly appenders = new Map<string, LogAppender>();
  /** Intact length of each log as last loaded, so a writer can cut off a torn tail without parsing twice. */
  private readonly loadedLengths = new Map<string, { size: number; validLength: number }>();

  constructor(
    readonly projectsDirectory: string,
    private readonly durable: boolean,
  ) {}

  path(key: SessionKey): string {
    return path.join(this.projectsDirectory, key.projectKey, `${key.sessionId}.jsonl`);
  }

  /** `path(key)`, its project's folder checked not to be a link (see project-folders.ts). */
  private checkedPath(key: SessionKey): string {
    projectFolder(this.projectsDirectory, key.projectKey);
    return this.path(key);
  }

  /** The project's folder, created if missing; never a link (see project-folders.ts). */
  async ensureProjectFolder(projectKey: string): Promise<void> {
    const folder = projectFolder(this.projectsDirectory, projectKey);
    if (fs.existsSync(folder)) return;
    const firstCreated = fs.mkdirSync(folder, { recursive: true });
    if (this.durable && firstCreated !== undefined) await flushCreatedDirectories(folder, firstCreated);
  }

  /** The session's appender when it is open already: a tool's backup appends without an await. */
  openAppender(key: SessionKey): LogAppender | undefined {
    return this.appenders.get(keyString(key));
  }

  async appender(key: SessionKey): Promise<LogAppender> {
    await this.ensureProjectFolder(key.projectKey);
    const file = this.path(key);
    const existed = fs.existsSync(file);
    const fd = openStoreFile(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_APPEND, `the log of session ${key.sessionId}`);
    let length: number;
    try {
      const size = fs.fstatSync(fd).size;
      const known = this.loadedLengths.get(keyString(key));
      length = size === 0 ? 0 : known !== undefined && known.size === size ? known.validLength : parseLog(fs.readFileSync(fd), file).validLength;
      if (length < size) {
        // A torn tail from a crash was never acknowledged; appending after it would merge it into the next line.
        fs.ftruncateSync(fd, length);
        if (this.durable) await flushFileData(fd);
      }
      if (!existed && this.durable) await flushDirectory(path.dirname(file));
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
    const appender = new LogAppender(fd, length);
    this.appenders.set(keyString(key), appender);
    return appender;
  }

  /** Every entry of the log, or null when there is none. */
  load(key: SessionKey): StoreEntry[] | null {
    const file = this.checkedPath(key);
    let bytes: Buffer;
    try {
      bytes = readAndClose(openStoreFile(file, fs.constants.O_RDONLY, `the log of session ${key.sessionId}`));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      if (RewindableError.isInstance(error)) throw error;
      throw storeIoError(`read the log of session ${key.sessionId} (${file})`, error);
    }
    const parsed = parseLog(bytes, file);
    this.loadedLengths.set(keyString(key), { size: bytes.length, validLength: parsed.validLength });
    // A crash between creating the log and completing its first line: nothing was ever
    // acknowledged, so the session does not exist (resuming it would skip its header).
    return parsed.entries.length === 0 ? null : parsed.entries;
  }

  delete(key: SessionKey): void {
    this.appenders.get(keyString(key))?.close();
    this.appenders.delete(keyString(key));
    fs.rmSync(this.checkedPath(key), { force: true });
  }

  closeAll(): void {
    for (const appender of this.appenders.values()) appender.close();
    this.appenders.clear();
  }
}

export function keyString(key: SessionKey): string {
  return `${key.projectKey}/${key.sessionId}`;
}
