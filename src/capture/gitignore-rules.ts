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

  constructor(private readonly root: string) {
    this.addFile('', path.join(root, '.git', 'info', 'exclude'));
    this.addFile('', path.join(root, '.gitignore'));
  }

  /** Adds the rules of a `.gitignore` found at `relativePath` (POSIX separators). */
  addGitignore(relativePath: string): void {
    const directory = path.posix.dirname(relativePath);
    if (directory === '.') return; // the root's was read up front
    this.addFile(directory, path.join(this.root, relativePath));
  }

  /**
   * Globs that prune directories the root rules ignore, so the walk never
   * enters them (`dist/`, `target/` ...). Only plain names are translated, and
   * only when the root rules re-include nothing.
   */
  pruningGlobs(): string[] {
    const rules = readLines(path.join(this.root, '.gitignore'));
    if (rules.some((rule) => rule.startsWith('!'))) return [];
    return rules.flatMap((rule) => {
      const trimmed = rule.replace(/\/$/, '');
      if (!/^\/?[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(trimmed) || trimmed === '/' || trimmed.includes('..')) return [];
      const anchored = trimmed.startsWith('/') || trimmed.slice(1).includes('/');
      const name = trimmed.replace(/^\//, '');
      return anchored ? [`${name}/**`] : [`**/${name}/**`];
    });
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
      const result = rules.test(directory === '' ? relativePath : relativePath.slice(directory.length + 1));
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
    // Keep levels ordered from the root down, so deeper rules are applied last.
    this.levels.set(directory, rules);
    const sorted = [...this.levels].sort(([a], [b]) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
    this.levels.clear();
    for (const [key, value] of sorted) this.levels.set(key, value);
    this.ignoredDirectories.clear();
  }
}

function readLines(file: string): string[] {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  } catch {
    return [];
  }
}
