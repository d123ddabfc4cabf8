import fs from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { ResolvedCapture } from './capture-options.js';
import { GitignoreRules } from './gitignore-rules.js';

export interface ScopeEntry {
  /** Absolute path (under the real project root). */
  path: string;
  /** Relative to the project root, POSIX separators. */
  relative: string;
  /** lstat of the entry: links are never followed. */
  stat: fs.BigIntStats;
}

export interface ScopeWalk {
  /** Regular files, links and special files in scope (never directories). */
  entries: ScopeEntry[];
  /** Files the walk found that `.gitignore` rules leave out (relative paths). */
  ignored: string[];
  /** The exclude globs in force (defaults, options, and directories pruned by the root `.gitignore`). */
  excludePatterns: string[];
}

/**
 * Lists the capture scope. fast-glob walks the tree without following links
 * (so a link loop cannot trap it) and prunes excluded directories; `.gitignore`
 * rules found on the way are applied after; each remaining entry is lstat'ed
 * once, which is what change detection compares.
 */
export function walkScope(root: string, capture: ResolvedCapture): ScopeWalk {
  const rules = capture.gitignore ? new GitignoreRules(root) : undefined;
  const excludePatterns = [...capture.exclude, ...(rules?.pruningGlobs() ?? [])];
  let found: fg.Entry[];
  try {
    found = fg.sync(capture.include, {
      cwd: root,
      dot: true,
      onlyFiles: false,
      followSymbolicLinks: false,
      objectMode: true,
      ignore: excludePatterns,
    });
  } catch (error) {
    throw new RewindableError(
      RewindableErrorCode.CAPTURE_FAILED,
      `Could not scan the capture scope under ${root}: ${(error as Error).message}. Fix the permissions or exclude that directory.`,
      { cause: error },
    );
  }
  const candidates = found.filter((entry) => !entry.dirent.isDirectory());
  if (rules !== undefined) {
    for (const entry of candidates) if (path.posix.basename(entry.path) === '.gitignore') rules.addGitignore(entry.path);
  }
  const filter = rules?.hasRules === true ? rules : undefined;
  const entries: ScopeEntry[] = [];
  const ignored: string[] = [];
  const separator = path.sep;
  for (const entry of candidates) {
    if (filter?.isIgnored(entry.path)) {
      ignored.push(entry.path);
      continue;
    }
    const absolute = separator === '/' ? `${root}/${entry.path}` : path.join(root, ...entry.path.split('/'));
    try {
      entries.push({ path: absolute, relative: entry.path, stat: fs.lstatSync(absolute, { bigint: true }) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // removed during the walk: it is simply not there
    }
  }
  return { entries, ignored, excludePatterns };
}
