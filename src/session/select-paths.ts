import path from 'node:path';
import picomatch from 'picomatch';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { canonicalLocation, isInside } from '../paths.js';
import type { SessionState, TrackedPath } from './session-state.js';

/**
 * The stored paths of the tracked files `inputs` select. Each input is a
 * file, a directory (every tracked file under it) or, when it names neither, a glob (`src/**\/*.ts`,
 * matched against paths relative to the project root with POSIX separators,
 * dot files included); relative inputs resolve against the project root, as
 * the tools' paths do. An input that leads outside the project root and its
 * extra roots (`..`, `../*`, `/`) is an `INVALID_PATH` error naming it: it
 * would otherwise select every tracked file. With `eachMustMatch`, an input
 * that selects no tracked file is one too: a rewind of a misspelled path must
 * not quietly do nothing.
 */
export function selectTrackedPaths(state: SessionState, root: string, inputs: readonly string[], what: string, eachMustMatch: boolean): Set<string> {
  if (!Array.isArray(inputs)) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${what}: \`paths\` must be an array of file paths, directories or globs.`, { details: { option: 'paths' } });
  }
  const tracked = new SortedTracked(state, root);
  const roots = [root, ...state.confinement.extraRoots];
  const globs = new Map<string, (relative: string) => boolean>();
  const realDirectories = new Map<string, string>();
  for (const input of inputs) {
    if (typeof input !== 'string' || input.length === 0 || input.includes('\0')) {
      throw new RewindableError(RewindableErrorCode.INVALID_PATH, `Invalid file path ${JSON.stringify(input)} in ${what}: expected a non-empty string without NUL bytes.`);
    }
    const wanted = canonicalLocationIn(path.resolve(root, input), realDirectories);
    refuseOutside(input, wanted, root, roots, what);
    // A name like `app/[id]/page.tsx` is a file before it is a glob: the glob is tried only when the name selects nothing.
    let found = tracked.selectLiteral(wanted);
    if (!found) {
      const scan = picomatch.scan(input);
      if (scan.isGlob) found = tracked.selectGlob(globMatcher(input, root, globs), fixedPrefix(scan, root));
    }
    if (!found && eachMustMatch) {
      throw new RewindableError(
        RewindableErrorCode.INVALID_PATH,
        `${JSON.stringify(input)} in ${what} names no file this session tracks. List the tracked files with listCheckpoints() or diffFiles().`,
        { details: { path: input } },
      );
    }
  }
  return tracked.selected;
}

/**
 * `canonicalLocation`, resolving each directory once: inputs by the thousand
 * name files of a few directories, and a real path costs a system call (and,
 * for a directory that does not exist, a thrown error per level).
 */
function canonicalLocationIn(absolute: string, realDirectories: Map<string, string>): string {
  const directory = path.dirname(absolute);
  if (directory === absolute) return canonicalLocation(absolute);
  let real = realDirectories.get(directory);
  if (real === undefined) {
    real = path.dirname(canonicalLocation(absolute));
    realDirectories.set(directory, real);
  }
  return path.join(real, path.basename(absolute));
}

/**
 * A glob's `..` segments collapse as a path's do, so one input resolved as a
 * path says where both readings of it lead: outside every root, the literal
 * names nothing tracked and the glob, matched against paths relative to the
 * root, would take all of them.
 */
function refuseOutside(input: string, resolved: string, root: string, roots: readonly string[], what: string): void {
  if (roots.some((allowed) => resolved === allowed || isInside(resolved, allowed))) return;
  throw new RewindableError(
    RewindableErrorCode.INVALID_PATH,
    `${JSON.stringify(input)} in ${what} leads outside the project (${root}) to ${resolved}; name files, directories or globs inside the project.`,
    { details: { path: input } },
  );
}

/**
 * What every absolute path the glob can match starts with: its leading
 * directories and the plain characters its first wildcard segment opens
 * with (`src/util/parse*.ts` → `<root>/src/util/parse`). Only those files are
 * tried, which keeps thousands of narrow globs from each trying every file.
 * A negated glob matches outside its base, and an escape is not itself a
 * character of the name: those try every file (the root stands for all).
 */
function fixedPrefix(scan: ReturnType<typeof picomatch.scan>, root: string): string {
  if (scan.negated || scan.base.includes('\\')) return root;
  const base = path.resolve(root, scan.base);
  const plain = /^[\w.~ -]*/.exec(scan.glob)![0];
  // A segment opening with `..` might stand for the parent directory (where extra roots lie): no narrowing by it.
  if (plain === '' || plain.startsWith('..')) return base;
  return base.endsWith(path.sep) ? base + plain : base + path.sep + plain;
}

/** The input as a glob over paths relative to the project root (an absolute glob made relative to it first); one compiled matcher per pattern. */
function globMatcher(input: string, root: string, compiled: Map<string, (relative: string) => boolean>): (relative: string) => boolean {
  const pattern = (path.isAbsolute(input) ? path.relative(root, input) : input).split(path.sep).join('/');
  let isMatch = compiled.get(pattern);
  if (isMatch === undefined) {
    isMatch = picomatch(pattern, { dot: true });
    compiled.set(pattern, isMatch);
  }
  return isMatch;
}

/**
 * The tracked files sorted by absolute path, so the files under a directory
 * are one contiguous run found by binary search: each input costs a search
 * and the files it selects, not a pass over every tracked file (200,000
 * inputs against as many files would be 4·10¹⁰ comparisons).
 */
class SortedTracked {
  readonly selected = new Set<string>();
  private readonly entries: TrackedPath[];
  /** For each index, the next index not yet selected (path-halving union-find): a run selected twice costs nothing the second time. */
  private readonly nextUnselected: Int32Array;
  private relatives: string[] | undefined;

  constructor(
    state: SessionState,
    private readonly root: string,
  ) {
    // Code-unit order (no locale): the order in which every string with a given prefix is contiguous.
    this.entries = [...state.paths.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    this.nextUnselected = Int32Array.from({ length: this.entries.length + 1 }, (_, index) => index);
  }

  /** The file `wanted` names, or every file under the directory it names; true when there was one. */
  selectLiteral(wanted: string): boolean {
    const exact = this.lowerBound(wanted);
    const isFile = this.entries[exact]?.path === wanted;
    if (isFile) this.selectRun(exact, exact + 1);
    const [start, end] = this.runWithPrefix(wanted.endsWith(path.sep) ? wanted : wanted + path.sep);
    this.selectRun(start, end);
    return isFile || start < end;
  }

  /** The files starting with `prefix` (see `fixedPrefix`) that the glob matches; true when there was one. */
  selectGlob(isMatch: (relative: string) => boolean, prefix: string): boolean {
    // Files of the extra roots match globs relative to the root too (`../shared/*.md`): the root's own prefix would leave them out.
    const [start, end] = prefix === this.root ? [0, this.entries.length] : this.runWithPrefix(prefix);
    this.relatives ??= this.entries.map((entry) => relativeName(entry.path, this.root));
    let found = false;
    for (let index = start; index < end; index += 1) {
      if (!isMatch(this.relatives[index]!)) continue;
      this.selected.add(this.entries[index]!.storedPath);
      found = true;
    }
    return found;
  }

  /** Indexes of the paths that start with `prefix`: from the prefix itself up to the first string past every extension of it. */
  private runWithPrefix(prefix: string): [number, number] {
    const last = prefix.charCodeAt(prefix.length - 1);
    if (last === 0xffff) return [this.lowerBound(prefix), this.entries.length]; // no code unit past it: only a glob's prefix ends so, and the glob is still matched on each
    const pastPrefix = prefix.slice(0, -1) + String.fromCharCode(last + 1);
    return [this.lowerBound(prefix), this.lowerBound(pastPrefix)];
  }

  private lowerBound(value: string): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.entries[middle]!.path < value) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private selectRun(start: number, end: number): void {
    for (let index = this.findUnselected(start); index < end; index = this.findUnselected(index + 1)) {
      this.selected.add(this.entries[index]!.storedPath);
      this.nextUnselected[index] = index + 1;
    }
  }

  private findUnselected(index: number): number {
    const next = this.nextUnselected;
    while (next[index]! !== index) {
      next[index] = next[next[index]!]!;
      index = next[index]!;
    }
    return index;
  }
}

/** A path relative to the root with `/` separators, as globs are matched against. */
function relativeName(absolute: string, root: string): string {
  const under = root.endsWith(path.sep) ? root : root + path.sep;
  if (path.sep === '/' && absolute.startsWith(under)) return absolute.slice(under.length);
  return path.relative(root, absolute).split(path.sep).join('/');
}
