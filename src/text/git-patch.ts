import crypto from 'node:crypto';
import zlib from 'node:zlib';

/**
 * The parts of a git patch that are git's own encodings: object ids, modes
 * and binary patches, so that `git apply` takes a diff as it takes git's.
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
