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
}

export interface ResolvedCapture {
  include: string[];
  exclude: string[];
  gitignore: boolean;
  maxFileBytes: number;
}

const schema = z.object({
  include: z.array(z.string().min(1)).min(1).optional(),
  exclude: z.array(z.string().min(1)).optional(),
  gitignore: z.boolean().optional(),
  maxFileBytes: z.number().int().positive().optional(),
});

/** Always left out: version control data, dependencies, and the store itself. */
export const defaultExcludes = ['**/.git', '**/.git/**', '**/node_modules', '**/node_modules/**'];

export function resolveCapture(options: CaptureOptions | boolean | undefined, root: string, storeDirectory: string | undefined): ResolvedCapture | undefined {
  if (options === undefined || options === false) return undefined;
  const parsed = schema.safeParse(options === true ? {} : options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Invalid capture options: ${issue.path.join('.') || 'capture'}: ${issue.message}.`);
  }
  const storeExcludes =
    storeDirectory !== undefined && isInside(storeDirectory, root) ? [path.relative(root, storeDirectory).split(path.sep).join('/')].flatMap((relative) => [relative, `${relative}/**`]) : [];
  return {
    include: parsed.data.include ?? ['**'],
    exclude: [...defaultExcludes, ...storeExcludes, ...(parsed.data.exclude ?? [])],
    gitignore: parsed.data.gitignore ?? true,
    maxFileBytes: parsed.data.maxFileBytes ?? 10 * 1024 * 1024,
  };
}
