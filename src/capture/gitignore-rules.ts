import fs from 'node:fs';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';

/**
 * `.gitignore` semantics for a scanned tree: rules of a `.gitignore` apply
 * below its directory, deeper files override shallower ones, and nothing
 * inside an ignored directory can be re-included (so such a directory is
 * never looked into).
 */
export class GitignoreRules {
  /** Rules by the directory they belong to ('' is the root). */
  private readonly levels = new Map<string, Ignore>();
  private readonly ignoredDirectories = new Map<string, boolean>();
  /** Last path segments that some negation rule (`!name`) may re-include; `*` when a negation is a glob. */
  private readonly negated = new Set<string>();
  private readonly rootRules: PlainDirectoryRule[];
  private pruned: PlainDirectoryRule[] | undefined;
  private readonly added = new Set<string>();

  constructor(private readonly root: string) {
    this.addFile('', path.join(root, '.git', 'info', 'exclude'));
    this.addFile('', path.join(root, '.gitignore'));
    this.rootRules = readLines(path.join(root, '.gitignore')).flatMap(plainDirectoryRule);
  }

  /** Adds the rules of a `.gitignore` found at `relativePath` (POSIX separators). */
  addGitignore(relativePath: string): void {
    const directory = path.posix.dirname(relativePath);
    if (directory === '.' || this.added.has(relativePath)) return; // the root's was read up front
    this.added.add(relativePath);
    this.addFile(directory, path.join(this.root, relativePath));
  }

  /**
   * Globs describing the directories the walk need not enter (`dist/**` ...):
   * see `isPruned`. Reported with the scan's exclude globs.
   */
  pruningGlobs(): string[] {
    return this.prunedDirectories().map((rule) => (rule.anchored ? `${rule.path}/**` : `**/${rule.path}/**`));
  }

  /**
   * True for a directory (relative, POSIX) that git ignores for a plain path
   * in the root `.gitignore` (`dist`, `dist/`, `/out`), with no negation rule
   * read so far that could re-include it. Git never looks inside an ignored
   * directory, so the walk may skip it whole (`dist/`, `target/` ...). Only
   * directories are pruned: a file of that name is left to `isIgnored`, since
   * `dist/` does not ignore a file named `dist`.
   */
  isPruned(directory: string): boolean {
    return this.prunedDirectories().some((rule) => (rule.anchored ? directory === rule.path : path.posix.basename(directory) === rule.path));
  }

  /** True once any rule was read: a tree without `.gitignore` files needs no filtering. */
  get hasRules(): boolean {
    return this.levels.size > 0;
  }

  /** True when a file at `relativePath` (POSIX separators) is ignored. */
  isIgnored(relativePath: string): boolean {
    const parts = relativePath.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) {
      if (this.isDirectoryIgnored(parts.slice(0, depth).join('/'))) return true;
    }
    return this.test(relativePath);
  }

  private prunedDirectories(): PlainDirectoryRule[] {
    // A negation in any `.gitignore` (nested ones included) may re-include a directory of that name.
    this.pruned ??= this.negated.has('*') ? [] : this.rootRules.filter((rule) => !this.negated.has(path.posix.basename(rule.path)));
    return this.pruned;
  }

  private isDirectoryIgnored(directory: string): boolean {
    let known = this.ignoredDirectories.get(directory);
    if (known === undefined) {
      const parent = path.posix.dirname(directory);
      known = (parent !== '.' && this.isDirectoryIgnored(parent)) || this.test(`${directory}/`);
      this.ignoredDirectories.set(directory, known);
    }
    return known;
  }

  /** Applies the levels from the root down; the deepest rule that matches decides. */
  private test(relativePath: string): boolean {
    let ignored = false;
    for (const [directory, rules] of this.levels) {
      // A .gitignore's rules apply below its directory, not to the directory itself.
      if (directory !== '' && (!relativePath.startsWith(`${directory}/`) || relativePath.length === directory.length + 1)) continue;
      const result = testOwnPath(rules, directory === '' ? relativePath : relativePath.slice(directory.length + 1));
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }

  private addFile(directory: string, file: string): void {
    const lines = readLines(file);
    if (lines.length === 0) return;
    const rules = this.levels.get(directory) ?? ignore();
    rules.add(lines);
    for (const line of lines) if (line.startsWith('!')) this.negated.add(negatedName(line));
    this.pruned = undefined;
    // Keep levels ordered from the root down, so deeper rules are applied last.
    this.levels.set(directory, rules);
    const sorted = [...this.levels].sort(([a], [b]) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
    this.levels.clear();
    for (const [key, value] of sorted) this.levels.set(key, value);
    this.ignoredDirectories.clear();
  }
}

/**
 * `ignore` reports a path under a directory its rules ignore as ignored. Our
 * callers test a path only once every directory above it is known to be in
 * scope: one these rules ignore was re-included by a deeper `.gitignore`
 * (`!build`), and git then matches the path on its own. Rules without a slash
 * match its name, so the name alone is tested (rules with a slash in such a
 * level are then matched against the name too: an approximation).
 */
function testOwnPath(rules: Ignore, relativePath: string): ReturnType<Ignore['test']> {
  const parent = path.posix.dirname(relativePath.replace(/\/$/, ''));
  if (parent === '.' || !rules.test(`${parent}/`).ignored) return rules.test(relativePath);
  return rules.test(relativePath.slice(parent.length + 1));
}

/** A root rule naming directories by a plain path: `dist`, `dist/`, `/out`, `docs/build`. */
interface PlainDirectoryRule {
  path: string;
  /** Relative to the root (a leading or middle slash), rather than matching at any depth. */
  anchored: boolean;
}

function plainDirectoryRule(line: string): PlainDirectoryRule[] {
  const trimmed = line.replace(/\/$/, '');
  if (!/^\/?[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(trimmed)) return [];
  const relative = trimmed.replace(/^\//, '');
  if (relative.split('/').some((segment) => segment === '.' || segment === '..')) return [];
  return [{ path: relative, anchored: trimmed.startsWith('/') || relative.includes('/') }];
}

/** The last segment of the path a negation rule names, or `*` when it is a glob (it may name anything). */
function negatedName(line: string): string {
  const pattern = line.slice(1).trim().replace(/\/+$/, '');
  return /[*?[\\]/.test(pattern) ? '*' : path.posix.basename(pattern);
}

function readLines(file: string): string[] {
  let fd: number;
  try {
    // Non-blocking: a FIFO of that name would hold the scan until some writer came. Only a file holds rules.
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return [];
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return [];
    return fs
      .readFileSync(fd, 'utf8')
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  } catch {
    return [];
  } finally {
    fs.closeSync(fd);
  }
}
