import fs from 'node:fs';
import path from 'node:path';
import { validate as isUuidString } from 'uuid';
import { fileIoError, RewindableError, RewindableErrorCode } from './errors.js';

/** The project's key in the store: its real path with every character outside `[A-Za-z0-9]` replaced by `-`. */
export function encodeProjectKey(realProjectRoot: string): string {
  return realProjectRoot.replace(/[^A-Za-z0-9]/g, '-');
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && isUuidString(value);
}

/**
 * A UUID in its canonical form. UUIDs are the same whatever the case of their
 * hex digits (RFC 9562 reads them without regard to case and writes them in
 * lowercase): `9E97…` and `9e97…` name one session, one checkpoint, one
 * message. Ids are stored and returned in lowercase, so two spellings never
 * make two sessions whose files collide on a case-insensitive filesystem.
 */
export function canonicalUuid(value: unknown, what: string): string {
  assertUuid(value, what);
  return value.toLowerCase();
}

/** The key a stored id is looked up by: ids written by other builds or other writers may be in uppercase. */
export function uuidKey(id: string): string {
  return id.toLowerCase();
}

/** A map whose keys are UUIDs, found whatever the case they are spelled in. */
export class UuidMap<V> extends Map<string, V> {
  override get(id: string): V | undefined {
    return super.get(uuidKey(id));
  }
  override has(id: string): boolean {
    return super.has(uuidKey(id));
  }
  override set(id: string, value: V): this {
    return super.set(uuidKey(id), value);
  }
  override delete(id: string): boolean {
    return super.delete(uuidKey(id));
  }
}

export function assertUuid(value: unknown, what: string): asserts value is string {
  if (!isUuid(value)) {
    throw new RewindableError(
      RewindableErrorCode.INVALID_ID,
      `${JSON.stringify(value)} is not a valid ${what}: expected a UUID such as "3f0c2a8e-6a1b-4c4e-9f3e-2b7d5c1a9e40".`,
      { details: { id: value } },
    );
  }
}

/** Where tracked paths may live. All directories are real paths. */
export interface PathScope {
  /** Real path of the project root. */
  readonly root: string;
  /** The project root as the caller spelled it (may pass through links). */
  readonly givenRoot: string;
  readonly extraRoots: readonly string[];
  /** The store's directory, which is never tracked (absent for stores that are not on disk). */
  readonly storeDirectory: string | undefined;
}

/**
 * Whether a path read back from a store (a log record of this or another
 * host, a copied store, a fork source) may be acted on: inside the project
 * root or an extra root, and not inside the store. Stored paths are canonical
 * when written, so this is a check of the string; links that appear on the
 * way later are refused when the path's directory is pinned.
 */
export function isConfined(absolute: string, scope: Pick<PathScope, 'root' | 'extraRoots' | 'storeDirectory'>): boolean {
  if (!isInside(absolute, scope.root) && !scope.extraRoots.some((root) => isInside(absolute, root))) return false;
  const store = scope.storeDirectory;
  return store === undefined || (absolute !== store && !isInside(absolute, store));
}

export function isInside(child: string, parent: string): boolean {
  // Both normalized absolute POSIX paths (the usual case, thousands of times when a log is loaded): a string test.
  if (isPlainRoot(parent) && child.charCodeAt(0) === slash && isPlain(child)) {
    return child.length > parent.length + 1 && child.charCodeAt(parent.length) === slash && child.startsWith(parent);
  }
  const relative = path.relative(parent, child);
  // A `..` segment leaves `parent`; a name that merely starts with two dots (`..data`) does not.
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/**
 * The canonical absolute path of a file a caller names: relative paths
 * resolve against the project root, and every directory that exists is
 * replaced by its real path, so one file has one tracked path. Throws a typed
 * error for paths outside the allowed roots or inside the store.
 */
export function canonicalPath(input: unknown, scope: PathScope): string {
  if (typeof input !== 'string' || input.length === 0 || input.includes('\0')) {
    throw new RewindableError(
      RewindableErrorCode.INVALID_PATH,
      `Invalid file path ${JSON.stringify(input)}: expected a non-empty string without NUL bytes.`,
    );
  }
  if (/\p{Cs}/u.test(input)) {
    // A lone UTF-16 surrogate has no UTF-8 form: the filesystem would get U+FFFD in its place, so two different
    // strings would name one file, and the path kept would not be the file written.
    throw new RewindableError(RewindableErrorCode.INVALID_PATH, `Invalid file path ${JSON.stringify(input)}: it holds a lone UTF-16 surrogate, which no file name can hold.`);
  }
  if (input.endsWith('/') || input.endsWith(path.sep)) {
    // `path.resolve` would drop the separator and name the file without it: a write meant for a directory
    // would replace a file of that name.
    throw new RewindableError(RewindableErrorCode.INVALID_PATH, `Invalid file path ${JSON.stringify(input)}: it ends with a path separator, so it names a directory; name a file.`);
  }
  let absolute = physicalParent(input, scope.givenRoot) ?? path.resolve(scope.givenRoot, input);
  if (absolute === scope.givenRoot || isInside(absolute, scope.givenRoot)) {
    absolute = path.join(scope.root, path.relative(scope.givenRoot, absolute));
  }
  const canonical = canonicalLocation(absolute);
  const roots = [scope.root, ...scope.extraRoots];
  if (!roots.some((root) => isInside(canonical, root))) {
    throw new RewindableError(
      RewindableErrorCode.PATH_OUTSIDE_PROJECT,
      `${input} is outside the project root ${scope.root}` +
        (canonical !== absolute ? ` (it resolves to ${canonical})` : '') +
        '. Only files inside the project can be tracked; add extra roots with the `extraRoots` option.',
      { details: { path: input, resolved: canonical } },
    );
  }
  const store = scope.storeDirectory;
  if (store !== undefined && (canonical === store || isInside(canonical, store))) {
    throw new RewindableError(
      RewindableErrorCode.PATH_IN_STORE,
      `${input} is inside rewindable's own store (${scope.storeDirectory}); the store is never tracked.`,
      { details: { path: input } },
    );
  }
  return canonical;
}

/**
 * For a path with a `..` segment, where the system takes it: `link/../a.txt`
 * names the `a.txt` beside the link's target, not the one beside the link,
 * which is what `path.resolve` would say. Undefined for a path without `..`,
 * or whose directory does not exist (nothing can be written there anyway).
 */
function physicalParent(input: string, givenRoot: string): string | undefined {
  if (!/(?:^|[\\/])\.\.(?:[\\/]|$)/.test(input)) return undefined;
  const raw = path.isAbsolute(input) ? input : `${givenRoot}${path.sep}${input}`;
  try {
    return path.join(fs.realpathSync.native(path.dirname(raw)), path.basename(raw));
  } catch {
    return undefined;
  }
}

/** `absolute` with the longest existing directory prefix of its parent replaced by its real path. */
export function canonicalLocation(absolute: string): string {
  const missing: string[] = [path.basename(absolute)];
  for (let current = path.dirname(absolute); ; current = path.dirname(current)) {
    try {
      return path.join(fs.realpathSync.native(current), ...missing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || path.dirname(current) === current) throw fileIoError('resolve', absolute, error);
      missing.unshift(path.basename(current));
    }
  }
}

/** Paths in the log are relative to the project root (so a moved project keeps its history), or absolute for extra roots. */
export function toStoredPath(absolute: string, root: string): string {
  // The usual case, a canonical path below the root: the rest of the string as it is, with nothing to resolve
  // (`path.relative` resolves both paths, a few microseconds on every backup and every record).
  if (isPlainRoot(root) && absolute.length > root.length + 1 && absolute.charCodeAt(root.length) === slash && absolute.startsWith(root)) {
    const rest = absolute.slice(root.length + 1);
    if (isPlain(rest)) return rest;
  }
  return isInside(absolute, root) ? path.relative(root, absolute).split(path.sep).join('/') : absolute;
}

export function fromStoredPath(stored: string, root: string): string {
  if (stored !== '' && stored.charCodeAt(0) !== slash && isPlainRoot(root) && isPlain(stored)) return `${root}/${stored}`;
  return path.isAbsolute(stored) ? stored : path.join(root, ...stored.split('/'));
}

const slash = 0x2f;
/** A `.` or `..` segment, an empty one, or a trailing separator: something `path.join` or `path.relative` would change. */
const unnormalized = /(?:^|\/)\.\.?(?:\/|$)|\/\/|\/$/;

function isPlain(relativeOrAbsolute: string): boolean {
  return !unnormalized.test(relativeOrAbsolute);
}

/** A root the shortcuts of `toStoredPath` and `fromStoredPath` give the same answers for: POSIX, normalized, not `/` itself. */
function isPlainRoot(root: string): boolean {
  return path.sep === '/' && root.length > 1 && root.charCodeAt(0) === slash && isPlain(root);
}
