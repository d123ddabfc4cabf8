import fs from 'node:fs';
import path from 'node:path';
import { seededRandom, sourceFile } from './source-text.js';

export interface GeneratedProject {
  root: string;
  /** Relative paths, POSIX separators, in creation order. */
  files: string[];
  bytes: number;
}

/** Where file `index` of a generated project lives: packages of 2,000 files, directories of 25. */
export function generatedPath(index: number): string {
  const packageIndex = Math.floor(index / 2000);
  const directoryIndex = Math.floor(index / 25) % 80;
  return `packages/pkg-${packageIndex}/src/dir-${directoryIndex}/module-${index}.ts`;
}

/**
 * Writes a project of `fileCount` source-like files whose sizes spread
 * evenly between 0.2× and 1.8× `averageBytes`. The same arguments always
 * produce the same bytes.
 */
export function generateProject(root: string, fileCount: number, averageBytes: number, seed = 1): GeneratedProject {
  const random = seededRandom(seed);
  const files: string[] = [];
  let bytes = 0;
  let lastDirectory = '';
  for (let index = 0; index < fileCount; index++) {
    const relative = generatedPath(index);
    const absolute = path.join(root, relative);
    const directory = path.dirname(absolute);
    if (directory !== lastDirectory) {
      fs.mkdirSync(directory, { recursive: true });
      lastDirectory = directory;
    }
    const content = sourceFile(seed * 1_000_003 + index, Math.round(averageBytes * (0.2 + 1.6 * random())));
    fs.writeFileSync(absolute, content);
    files.push(relative);
    bytes += Buffer.byteLength(content);
  }
  return { root, files, bytes };
}
