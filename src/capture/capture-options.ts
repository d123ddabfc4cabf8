import path from 'node:path';
import { z } from 'zod';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { isInside } from '../paths.js';

/** What part of the project is scanned at every checkpoint, to catch changes made outside the tracked tools. */
export interface CaptureOptions {
  /**
   * Globs, relative to the project root, of the files to capture.
   * @default ['**']
   */
  include?: string[];
  /** Globs to leave out, on top of `.git`, `node_modules` and the store. */
  exclude?: string[];
  /**
   * Honour `.gitignore` files (at any depth) and `.git/info/exclude`.
   * @default true
   */
  gitignore?: boolean;
  /**
   * Files larger than this are not backed up; each scan reports them.
   * @default 10485760 (10 MiB)
   */
  maxFileBytes?: number;
  /**
   * Keep a journal of what changed, from a file watcher on every directory
   * in scope (Linux), so that a checkpoint examines only those paths instead
   * of the whole scope. Anything that could make it miss a change falls back
   * to the full scan (`lastScan.fullScanReason` says why): see docs/capture-journal.md.
   * @default false
   */
  journal?: boolean;
}

export interface ResolvedCapture {
  include: string[];
  exclude: string[];
  gitignore: boolean;
  maxFileBytes: number;
  journal: boolean;
  /** The store's directory relative to the root (POSIX separators) when it lies inside the project: never scanned. */
  storeDirectory?: string;
}

/**
 * Globs are matched against paths inside the project: an absolute one, or one
 * that climbs out with `..` (braces included: `{..,src}`), would reach files
 * outside it. No file name holds a NUL, and the walk relies on that.
 */
function insideRoot(pattern: string): boolean {
  return !/^!?(\/|[A-Za-z]:[\\/])/.test(pattern) && !/(^!?|[/{,])\.\.(?=$|[/},])/.test(pattern) && !pattern.includes('\0');
}

const glob = z
  .string()
  .min(1)
  .refine(insideRoot, {
    message: 'globs are relative to the project root and stay inside it: remove the leading "/" or the ".." segment (and any NUL byte), e.g. "src/**"',
  });

const schema = z.object({
  include: z.array(glob).min(1).optional(),
  exclude: z.array(glob).optional(),
  gitignore: z.boolean().optional(),
  maxFileBytes: z.number().int().positive().optional(),
  journal: z.boolean().optional(),
});

/** Always left out: version control data and dependencies (the store is left out by its path: see `storeDirectory`). */
export const defaultExcludes = ['**/.git', '**/.git/**', '**/node_modules', '**/node_modules/**'];

export function resolveCapture(options: CaptureOptions | boolean | undefined, root: string, storeDirectory: string | undefined): ResolvedCapture | undefined {
  if (options === undefined || options === false) return undefined;
  const parsed = schema.safeParse(options === true ? {} : options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Invalid capture options: ${issue.path.join('.') || 'capture'}: ${issue.message}.`);
  }
  return {
    include: parsed.data.include ?? ['**'],
    exclude: [...defaultExcludes, ...(parsed.data.exclude ?? [])],
    gitignore: parsed.data.gitignore ?? true,
    maxFileBytes: parsed.data.maxFileBytes ?? 10 * 1024 * 1024,
    journal: parsed.data.journal ?? false,
    // By path, not as a glob: a store named `store (v2)` or `[cache]` would not match itself as a glob.
    storeDirectory: storeDirectory !== undefined && isInside(storeDirectory, root) ? path.relative(root, storeDirectory).split(path.sep).join('/') : undefined,
  };
}
