import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { hunkId, type ChangeBlock, type LineDiff } from './patch-hunks.js';

/**
 * A file's patch as `git diff` writes it, and the parts of it that are git's
 * own encodings (object ids, modes, quoted names, binary patches), so that
 * `git apply` takes a diff as it takes git's.
 */

/** The mode git records: it keeps only whether the owner may execute the file. */
export function gitMode(mode: number): string {
  return mode & 0o100 ? '100755' : '100644';
}

/** The id git gives a file's content: the SHA-1 of `blob <size>\0` and the bytes. */
export function gitBlobId(bytes: Buffer): string {
  return crypto.createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

const base85Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';
/** Bytes of deflated data on one line of a binary patch. */
const bytesPerLine = 52;

/**
 * `GIT binary patch` with both literals, forward then reverse, as
 * `git diff --binary` writes them (git may write a delta instead; a
 * literal is always valid), so that `git apply -R` works too.
 */
export function gitBinaryPatch(before: Buffer, after: Buffer): string {
  return `GIT binary patch\n${literal(after)}\n${literal(before)}\n`;
}

/** `literal <size>`, then the zlib-deflated bytes in base85 lines, each led by its byte count (`A`-`Z` 1-26, `a`-`z` 27-52). */
function literal(bytes: Buffer): string {
  // Level 1, as git deflates by default (core.compression), so the text is what git writes.
  const deflated = zlib.deflateSync(bytes, { level: 1 });
  const lines = [`literal ${bytes.length}`];
  for (let offset = 0; offset < deflated.length; offset += bytesPerLine) {
    const chunk = deflated.subarray(offset, offset + bytesPerLine);
    const count = chunk.length <= 26 ? String.fromCharCode(0x41 + chunk.length - 1) : String.fromCharCode(0x61 + chunk.length - 27);
    lines.push(count + base85(chunk));
  }
  return lines.map((line) => `${line}\n`).join('');
}

/** Git's base85: each 4 bytes (the last group padded with zeros) as 5 characters, most significant first. */
function base85(bytes: Buffer): string {
  let text = '';
  for (let offset = 0; offset < bytes.length; offset += 4) {
    let value = 0;
    for (let index = 0; index < 4; index += 1) value = value * 256 + (bytes[offset + index] ?? 0);
    const group: string[] = [];
    for (let digit = 0; digit < 5; digit += 1) {
      group.unshift(base85Alphabet[value % 85]!);
      value = Math.floor(value / 85);
    }
    text += group.join('');
  }
  return text;
}

const quotedEscapes: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };

/**
 * A path as git writes it in a patch (`a/src/x.ts`): C-quoted, each byte of a
 * control character, quote, backslash or non-ASCII character escaped, when it
 * holds any of them (git's default `core.quotePath`). `git apply` reads a raw
 * tab or line break as the end of the name.
 */
export function gitQuotedPath(prefixed: string): string {
  const bytes = Buffer.from(prefixed, 'utf8');
  const plain = (byte: number) => byte >= 0x20 && byte < 0x7f && byte !== 34 && byte !== 92;
  if (bytes.every(plain)) return prefixed;
  let quoted = '"';
  for (const byte of bytes) quoted += plain(byte) ? String.fromCharCode(byte) : (quotedEscapes[byte] ?? `\\${byte.toString(8).padStart(3, '0')}`);
  return `${quoted}"`;
}

/** The `---`/`+++` line of a side: git ends it with a tab when the file's name holds a space (so a tool can tell where the name ends). */
export function gitSideLine(marker: '---' | '+++', side: string | undefined, name: string): string {
  return side === undefined ? `${marker} /dev/null\n` : `${marker} ${gitQuotedPath(`${side}/${name}`)}${name.includes(' ') ? '\t' : ''}\n`;
}

/** One side of a file's patch: its mode, or null where there is no file. */
export type PatchSide = { mode: number } | null;

/** What a file's patch is made from: the file now (`a/`) and the version it becomes (`b/`). */
export interface FilePatchSides {
  /** Path relative to the project root, with `/`. */
  name: string;
  current: PatchSide;
  target: PatchSide;
  before: Buffer;
  after: Buffer;
  /** The bytes differ (otherwise only the mode does). */
  contentChanged: boolean;
}

/** Where one `@@` hunk is, as its `@@` line numbers it, and the change blocks it covers (`hunkId`). */
export interface HunkRange {
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

/** A binary file's patch: git's `Binary files ... differ`, or with `binary` a `GIT binary patch` that `git apply` applies. */
export function gitBinaryFilePatch(sides: FilePatchSides, binary: boolean): string {
  const side = (state: PatchSide, prefix: string) => (state !== null ? gitQuotedPath(`${prefix}/${sides.name}`) : '/dev/null');
  return gitHeader(sides, binary) + (binary ? gitBinaryPatch(sides.before, sides.after) : `Binary files ${side(sides.current, 'a')} and ${side(sides.target, 'b')} differ\n`);
}

/** A text file's patch, with `context` unchanged lines around each change, and its hunks; `digest` names the diff (`hunkDigest`). */
export function gitTextFilePatch(sides: FilePatchSides, diff: LineDiff, context: number, digest: string): { patch: string; hunks: HunkRange[] } {
  const hunks = hunksOf(diff, context, digest);
  if (hunks.length === 0) return { patch: gitHeader(sides, false), hunks: [] };
  const names = gitSideLine('---', sides.current !== null ? 'a' : undefined, sides.name) + gitSideLine('+++', sides.target !== null ? 'b' : undefined, sides.name);
  return {
    patch: gitHeader(sides, false) + names + hunks.map(formatHunk).join(''),
    hunks: hunks.map(({ id, oldStart, oldLines, newStart, newLines }) => ({ id, oldStart, oldLines, newStart, newLines })),
  };
}

/** `diff --git`, the mode lines and the `index` line, as git writes them (full object ids for a binary patch, as `--binary` does). */
function gitHeader(sides: FilePatchSides, fullIndex: boolean): string {
  const { name, current, target } = sides;
  const lines = [`diff --git ${gitQuotedPath(`a/${name}`)} ${gitQuotedPath(`b/${name}`)}`];
  let indexMode = '';
  if (current === null && target !== null) lines.push(`new file mode ${gitMode(target.mode)}`);
  else if (current !== null && target === null) lines.push(`deleted file mode ${gitMode(current.mode)}`);
  else if (current !== null && target !== null) {
    if (gitMode(current.mode) !== gitMode(target.mode)) lines.push(`old mode ${gitMode(current.mode)}`, `new mode ${gitMode(target.mode)}`);
    else indexMode = ` ${gitMode(current.mode)}`;
  }
  if (sides.contentChanged) {
    const id = (side: PatchSide, bytes: Buffer) => (side !== null ? gitBlobId(bytes) : '0'.repeat(40));
    const shown = (full: string) => (fullIndex ? full : full.slice(0, 7));
    lines.push(`index ${shown(id(current, sides.before))}..${shown(id(target, sides.after))}${indexMode}`);
  }
  return lines.map((line) => `${line}\n`).join('');
}

/** `@@ -1,3 +1,4 @@ name`: a count of 1 is left out. */
function formatHunk(hunk: Hunk): string {
  const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`);
  const header = `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@${hunk.functionName !== undefined ? ` ${hunk.functionName}` : ''}`;
  return [header, ...hunk.lines].map((line) => `${line}\n`).join('');
}

interface Hunk extends HunkRange {
  lines: string[];
  /** The line git shows after the range: the nearest line before the hunk that starts like a definition. */
  functionName?: string;
}

/**
 * Unified-diff hunks: change blocks with `context` kept lines around them,
 * merged when their contexts touch, each named by the blocks it covers.
 */
function hunksOf(diff: LineDiff, context: number, digest: string): Hunk[] {
  const { currentLines, blocks } = diff;
  const end = (block: ChangeBlock) => block.currentStart + block.removed.length;
  const hunks: Hunk[] = [];
  for (let first = 0; first < blocks.length; ) {
    let last = first;
    while (last + 1 < blocks.length && blocks[last + 1]!.currentStart - end(blocks[last]!) <= 2 * context) last += 1;
    const leading = Math.min(context, blocks[first]!.currentStart - (first > 0 ? end(blocks[first - 1]!) : 0));
    const trailing = Math.min(context, (blocks[last + 1]?.currentStart ?? currentLines.length) - end(blocks[last]!));
    const oldFrom = blocks[first]!.currentStart - leading;
    const newFrom = blocks[first]!.targetStart - leading;
    const functionName = functionNameBefore(currentLines, oldFrom);
    const hunk: Hunk = { id: hunkId(digest, first, last), oldStart: 0, oldLines: 0, newStart: 0, newLines: 0, lines: [], ...(functionName !== undefined ? { functionName } : {}) };
    let at = oldFrom;
    for (const block of blocks.slice(first, last + 1)) {
      for (; at < block.currentStart; at += 1) addLine(hunk, ' ', currentLines[at]!);
      for (const line of block.removed) addLine(hunk, '-', line);
      for (const line of block.added) addLine(hunk, '+', line);
      at = end(block);
    }
    for (const stop = at + trailing; at < stop; at += 1) addLine(hunk, ' ', currentLines[at]!);
    // As git writes them: an empty side starts at the line before it.
    hunk.oldStart = hunk.oldLines === 0 ? oldFrom : oldFrom + 1;
    hunk.newStart = hunk.newLines === 0 ? newFrom : newFrom + 1;
    hunks.push(hunk);
    first = last + 1;
  }
  return hunks;
}

/**
 * Git's default: the nearest line before `index` (of the file now) that
 * starts with a letter, `_` or `$`, cut to 80 bytes, trailing spaces removed.
 */
function functionNameBefore(a: string[], index: number): string | undefined {
  for (let line = index - 1; line >= 0; line -= 1) {
    if (!/^[A-Za-z_$]/.test(a[line]!)) continue;
    return Buffer.from(a[line]!.slice(0, 80).replace(/\s+$/, ''), 'latin1').toString('utf8');
  }
  return undefined;
}

function addLine(hunk: Hunk, mark: ' ' | '-' | '+', line: string): void {
  const terminated = line.endsWith('\n');
  const text = Buffer.from(terminated ? line.slice(0, -1) : line, 'latin1').toString('utf8');
  hunk.lines.push(mark + text);
  if (!terminated) hunk.lines.push('\\ No newline at end of file');
  if (mark !== '+') hunk.oldLines += 1;
  if (mark !== '-') hunk.newLines += 1;
}

