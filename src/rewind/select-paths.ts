import path from 'node:path';
import picomatch from 'picomatch';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { canonicalLocation, isInside } from '../paths.js';
import type { SessionState, TrackedPath } from '../session/session-state.js';

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
  const tracked = [...state.paths.values()];
  const roots = [root, ...state.confinement.extraRoots];
  const storedPaths = new Set<string>();
  for (const input of inputs) {
    if (typeof input !== 'string' || input.length === 0 || input.includes('\0')) {
      throw new RewindableError(RewindableErrorCode.INVALID_PATH, `Invalid file path ${JSON.stringify(input)} in ${what}: expected a non-empty string without NUL bytes.`);
    }
    refuseOutside(input, root, roots, what);
    // A name like `app/[id]/page.tsx` is a file before it is a glob: the glob is tried only when the name selects nothing.
    let found = selectInto(storedPaths, tracked, literalMatcher(input, root));
    if (!found && picomatch.scan(input).isGlob) found = selectInto(storedPaths, tracked, globMatcher(input, root));
    if (!found && eachMustMatch) {
      throw new RewindableError(
        RewindableErrorCode.INVALID_PATH,
        `${JSON.stringify(input)} in ${what} names no file this session tracks. List the tracked files with listCheckpoints() or diffFiles().`,
        { details: { path: input } },
      );
    }
  }
  return storedPaths;
}

/**
 * A glob's `..` segments collapse as a path's do, so one input resolved as a
 * path says where both readings of it lead: outside every root, the literal
 * names nothing tracked and the glob, matched against paths relative to the
 * root, would take all of them.
 */
function refuseOutside(input: string, root: string, roots: readonly string[], what: string): void {
  const resolved = canonicalLocation(path.resolve(root, input));
  if (roots.some((allowed) => resolved === allowed || isInside(resolved, allowed))) return;
  throw new RewindableError(
    RewindableErrorCode.INVALID_PATH,
    `${JSON.stringify(input)} in ${what} leads outside the project (${root}) to ${resolved}; name files, directories or globs inside the project.`,
    { details: { path: input } },
  );
}

function selectInto(selected: Set<string>, tracked: readonly TrackedPath[], matches: (absolute: string) => boolean): boolean {
  let found = false;
  for (const entry of tracked) {
    if (!matches(entry.path)) continue;
    selected.add(entry.storedPath);
    found = true;
  }
  return found;
}

/** The file the input names, or every file under the directory it names. */
function literalMatcher(input: string, root: string): (absolute: string) => boolean {
  const wanted = canonicalLocation(path.resolve(root, input));
  const under = wanted.endsWith(path.sep) ? wanted : wanted + path.sep;
  return (absolute) => absolute === wanted || absolute.startsWith(under);
}

/** The input as a glob over paths relative to the project root (an absolute glob made relative to it first). */
function globMatcher(input: string, root: string): (absolute: string) => boolean {
  const pattern = path.isAbsolute(input) ? path.relative(root, input) : input;
  const isMatch = picomatch(pattern.split(path.sep).join('/'), { dot: true });
  return (absolute) => isMatch(path.relative(root, absolute).split(path.sep).join('/'));
}
