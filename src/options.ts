import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { RewindableError, RewindableErrorCode } from './errors.js';
import { openedSession, sessionChoice, type OpenedSession, type SessionOption } from './session-option.js';
import type { CaptureOptions } from './capture/capture-options.js';
import type { Durability } from './store/filesystem/filesystem-storage.js';
import type { StorageAdapter } from './store/storage-adapter.js';
import { isStorageAdapter, type StorageAdapterV1 } from './store/storage-adapter-v1.js';

export interface CheckpointManagerOptions {
  /** Absolute path of the project directory the agent works in. Required. */
  cwd: string;
  /**
   * Which session to open: `{ id? }` starts a new one, `{ resume, readOnly? }`
   * reopens one, `'continue'` reopens the project's most recent one (with
   * `CheckpointManager.open()` only). See `SessionOption`.
   * @default {} (a new session with a random UUID)
   */
  session?: SessionOption;
  /** @deprecated Use `session: { id }`. */
  sessionId?: string;
  /** @deprecated Use `session: { resume }`. */
  resume?: string;
  /** @deprecated Use `session: 'continue'`. */
  continue?: boolean;
  /** @deprecated Use `session: { resume, readOnly: true }`. */
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
   * flushing: a killed process loses nothing, a power cut may. The one knob
   * for both the store and the project files: a `storage` with a
   * `durability` of its own (`filesystemStorage({ durability })`) sets it
   * too, and a different value here is an `INVALID_OPTIONS` error.
   * @default the `durability` of `storage` when it has one, else 'full'
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
  session: z.unknown().optional(), // checked by sessionChoice, for messages that name the choices
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
  session: OpenedSession;
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
    const option = issue.path.join('.');
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Invalid CheckpointManager options: ${option || 'options'}: ${issue.message}.`, {
      details: option === '' ? {} : { option },
    });
  }
  const value = parsed.data;
  const session = openedSession(sessionChoice(value));
  const givenRoot = path.resolve(value.cwd);
  const root = realDirectory(givenRoot, 'cwd');
  return {
    givenRoot,
    root,
    session,
    storeDir: value.storeDir,
    storage: value.storage,
    enabled: value.enabled ?? true,
    durability: durabilityOf(value.durability, value.storage),
    extraRoots: (value.extraRoots ?? []).map((extra) => realDirectory(path.resolve(givenRoot, extra), 'extraRoots')),
    capture: value.capture as CaptureOptions | boolean | undefined,
    maxFileBytes: value.maxFileBytes ?? 64 * 1024 * 1024,
  };
}

/** The one durability of the manager and its store: given once, or the same value twice. */
function durabilityOf(given: Durability | undefined, storage: StorageAdapter | undefined): Durability {
  const stored = (storage as { durability?: unknown } | undefined)?.durability;
  const ofStorage = stored === 'full' || stored === 'none' ? stored : undefined;
  if (given !== undefined && ofStorage !== undefined && given !== ofStorage) {
    throw new RewindableError(
      RewindableErrorCode.INVALID_OPTIONS,
      `Invalid CheckpointManager options: durability '${given}' contradicts the storage's own durability '${ofStorage}'. ` +
        'Set it in one place: on the storage (filesystemStorage({ durability })), or on the manager with a storage that has none.',
      { details: { option: 'durability' } },
    );
  }
  return given ?? ofStorage ?? 'full';
}

function realDirectory(directory: string, option: string): string {
  let real: string;
  try {
    real = fs.realpathSync.native(directory);
  } catch {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The ${option} directory ${directory} does not exist. Pass the absolute path of an existing project directory.`, {
      details: { path: directory },
    });
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new RewindableError(RewindableErrorCode.CWD_NOT_FOUND, `The ${option} path ${directory} is not a directory. Pass the project directory, not a file in it.`, {
      details: { path: directory },
    });
  }
  return real;
}
