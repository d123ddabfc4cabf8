import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { RewindableError, RewindableErrorCode } from './errors.js';
import { assertUuid } from './paths.js';
import type { CaptureOptions } from './capture/capture-options.js';
import type { StorageAdapter } from './store/storage-adapter.js';
import { isStorageAdapter, type StorageAdapterV1 } from './store/storage-adapter-v1.js';

export interface CheckpointManagerOptions {
  /** Absolute path of the project directory the agent works in. Required. */
  cwd: string;
  /** Start a new session with this UUID. Fails with `SESSION_EXISTS` if it exists. Default: a new random UUID. */
  sessionId?: string;
  /** Reopen an existing session. Fails with `SESSION_NOT_FOUND` if it does not exist. */
  resume?: string;
  /**
   * Reopen the project's most recent session. Only with `CheckpointManager.open()`
   * (the session id is not known before the store is read).
   * @default false
   */
  continue?: boolean;
  /**
   * Open an existing session (`resume` required) without its lock, to list,
   * diff and dry-run while another process may be writing to it. Anything that
   * writes fails with `READ_ONLY`.
   * @default false
   */
  readOnly?: boolean;
  /**
   * Where the default filesystem storage keeps sessions and backups.
   * @default process.env.REWINDABLE_HOME, else `~/.rewindable`
   */
  storeDir?: string;
  /** Use this storage instead of the filesystem store in `storeDir`. */
  storage?: StorageAdapter | StorageAdapterV1;
  /**
   * When false, nothing is tracked or stored, and every rewind answers
   * "File rewinding is not enabled."
   * @default true
   */
  enabled?: boolean;
  /**
   * `full`: backups and their log records are flushed to disk (fsync) before
   * `trackEdit()` and `checkpoint()` return, and rewound files before
   * `rewindFiles()` returns. `none`: handed to the operating system without
   * flushing: a killed process loses nothing, a power cut may.
   * @default 'full'
   */
  durability?: 'full' | 'none';
  /** Directories outside `cwd` whose files may be tracked too. */
  extraRoots?: string[];
  /**
   * Also capture changes made outside the tracked tools (shell commands,
   * formatters, the user): at every checkpoint the scope is scanned, and every
   * file created, modified or deleted since the previous scan is backed up.
   * `true` uses the defaults (the whole project minus `.git`, `node_modules`,
   * the store and `.gitignore`d files).
   * @default false
   */
  capture?: CaptureOptions | boolean;
  /**
   * Largest file that is backed up, in bytes. Tracking a larger file fails
   * with `FILE_TOO_LARGE`.
   * @default 67108864 (64 MiB)
   */
  maxFileBytes?: number;
}

const optionsSchema = z.object({
  cwd: z.string({ error: 'cwd is required: the absolute path of the project directory' }).min(1, 'cwd must not be empty'),
  sessionId: z.string().optional(),
  resume: z.string().optional(),
  readOnly: z.boolean().optional(),
  continue: z.boolean().optional(),
  storeDir: z.string().min(1).optional(),
  storage: z.custom<StorageAdapter>(isStorageAdapter, {
    error: 'storage must be a storage adapter with specificationVersion "v2" (or "v1")',
  }).optional(),
  enabled: z.boolean().optional(),
  durability: z.enum(['full', 'none']).optional(),
  extraRoots: z.array(z.string().min(1)).optional(),
  capture: z.union([z.boolean(), z.object({}).passthrough()]).optional(),
  maxFileBytes: z.number().int().positive().optional(),
});

export interface ResolvedOptions {
  givenRoot: string;
  root: string;
  sessionId: string | undefined;
  resume: string | undefined;
  readOnly: boolean;
  storeDir: string | undefined;
  storage: StorageAdapter | undefined;
  enabled: boolean;
  durability: 'full' | 'none';
  extraRoots: string[];
  capture: CaptureOptions | boolean | undefined;
  maxFileBytes: number;
}

/** Validates options synchronously, so a bad `cwd` or id fails at construction. */
export function resolveOptions(options: CheckpointManagerOptions): ResolvedOptions {
  const parsed = optionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Invalid CheckpointManager options: ${issue.path.join('.') || 'options'}: ${issue.message}.`);
  }
  const value = parsed.data;
  if (value.sessionId !== undefined && value.resume !== undefined) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'Pass either sessionId (to start a new session) or resume (to reopen one), not both.');
  }
  if (value.continue === true) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'continue finds the session to reopen by reading the store: use `await CheckpointManager.open({ cwd, continue: true })`.');
  }
  if (value.readOnly === true && value.resume === undefined) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, 'readOnly needs resume: the id of the session to open.');
  }
  if (value.sessionId !== undefined) assertUuid(value.sessionId, 'session id');
  if (value.resume !== undefined) assertUuid(value.resume, 'session id to resume');
  const givenRoot = path.resolve(value.cwd);
  const root = realDirectory(givenRoot, 'cwd');
  return {
    givenRoot,
    root,
    sessionId: value.sessionId,
    resume: value.resume,
    readOnly: value.readOnly ?? false,
    storeDir: value.storeDir,
    storage: value.storage,
    enabled: value.enabled ?? true,
    durability: value.durability ?? 'full',
    extraRoots: (value.extraRoots ?? []).map((extra) => realDirectory(path.resolve(givenRoot, extra), 'extraRoots')),
    capture: value.capture as CaptureOptions | boolean | undefined,
    maxFileBytes: value.maxFileBytes ?? 64 * 1024 * 1024,
  };
}

function realDirectory(directory: string, option: string): string {
  let real: string;
  try {
    real = fs.realpathSync.native(directory);
  } catch {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The ${option} directory ${directory} does not exist. Pass the absolute path of an existing project directory.`);
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The ${option} path ${directory} is not a directory. Pass the project directory, not a file in it.`);
  }
  return real;
}
