import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the source tree, checked rather than reviewed: modules form
 * no import cycle (type-only imports count: a cycle of types is still two
 * files that cannot be read alone), and no code is compiled from strings,
 * which tsc, eslint and duplicate detection would never see.
 */

const sourceRoot = path.resolve(import.meta.dirname, '../src');

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The files `file` imports or re-exports by relative path, resolved to their .ts source. */
function relativeImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]/gms), ...text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)];
  return specifiers.map((match) => {
    const resolved = path.resolve(path.dirname(file), match[1]!);
    return resolved.endsWith('.js') ? `${resolved.slice(0, -3)}.ts` : resolved;
  });
}

/** Every cycle's files, one strongly connected component each (Tarjan's algorithm). */
function importCycles(files: readonly string[]): string[][] {
  const edges = new Map(files.map((file) => [file, relativeImports(file).filter((target) => target !== file)]));
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    lowLink.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!edges.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        lowLink.set(file, Math.min(lowLink.get(file)!, lowLink.get(target)!));
      } else if (onStack.has(target)) {
        lowLink.set(file, Math.min(lowLink.get(file)!, index.get(target)!));
      }
    }
    if (lowLink.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(path.relative(sourceRoot, member));
    } while (member !== file);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}

describe('the source tree', () => {
  const files = sourceFiles(sourceRoot);

  it('finds the modules it checks (the import pattern matches this code base)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(relativeImports(path.join(sourceRoot, 'checkpoint-manager.ts'))).toContain(path.join(sourceRoot, 'errors.ts'));
  });

  it('would report a cycle, type-only imports included', () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-cycle-'));
    try {
      fs.writeFileSync(path.join(directory, 'a.ts'), "import { b } from './b.js';\nexport const a = b;\n");
      fs.writeFileSync(path.join(directory, 'b.ts'), "import type { A } from './c.js';\nexport const b: A = 1;\n");
      fs.writeFileSync(path.join(directory, 'c.ts'), "export type A = number;\nexport type { a } from './a.js';\n");
      const cycles = importCycles(['a.ts', 'b.ts', 'c.ts'].map((name) => path.join(directory, name)));
      expect(cycles.map((cycle) => cycle.map((file) => path.basename(file)))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });

  it('has no import cycle, type-only imports included', () => {
    expect(importCycles(files)).toEqual([]);
  });

  it('compiles no code from strings: no eval, no new Function, no eval workers', () => {
    const offenders = files.filter((file) => /\bnew Function\s*\(|\beval\s*\(|\beval:\s*true/.test(fs.readFileSync(file, 'utf8')));
    expect(offenders.map((file) => path.relative(sourceRoot, file))).toEqual([]);
  });
});
