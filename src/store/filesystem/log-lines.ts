import { crc32 } from 'node:zlib';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import type { StoreEntry } from '../storage-adapter.js';

/**
 * Session log lines: one JSON object per line, ending in a `crc` field that
 * checks the line's own bytes. JSON alone cannot tell a flipped byte inside a
 * string from a real value, and a silently changed path or hash would make a
 * rewind restore the wrong thing.
 */

const crcSuffixLength = ',"crc":"00000000"}'.length;
const crcSuffixPattern = /,"crc":"([0-9a-f]{8})"\}$/;

export function encodeLine(entry: StoreEntry): string {
  return encodeLines([entry]).toString('utf8');
}

/**
 * Lines for `entries`, back to back, encoded straight into one buffer: each
 * entry's JSON, its checksum computed over those bytes, then the checksum
 * written over the closing brace. An append writes this buffer as it is.
 */
export function encodeLines(entries: readonly StoreEntry[]): Buffer {
  const texts = entries.map((entry) => {
    if ('crc' in entry) throw new TypeError('A log entry may not have its own "crc" field.');
    return JSON.stringify(entry);
  });
  let length = 0;
  // Per line: the JSON without its closing brace, the checksum field with its own brace, a newline.
  for (const text of texts) length += Buffer.byteLength(text) - 1 + crcSuffixLength + 1;
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (const text of texts) {
    const written = bytes.write(text, at);
    const crc = crc32(bytes.subarray(at, at + written)).toString(16).padStart(8, '0');
    at += written - 1; // the closing brace makes way for the checksum
    at += bytes.write(`,"crc":"${crc}"}\n`, at, 'latin1');
  }
  return bytes;
}

function decodeLine(line: string): StoreEntry | undefined {
  const match = crcSuffixPattern.exec(line);
  if (!match) return undefined;
  const body = `${line.slice(0, -crcSuffixLength)}}`;
  if (crc32(body).toString(16).padStart(8, '0') !== match[1]) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (typeof (value as { type?: unknown }).type !== 'string') return undefined;
    return value as StoreEntry;
  } catch {
    return undefined;
  }
}

export interface ParsedLog {
  entries: StoreEntry[];
  /** Byte length of the intact prefix; anything after it is a torn or corrupt tail. */
  validLength: number;
}

/**
 * Parses a whole log. A torn or corrupt last line is dropped (a crash while
 * appending leaves exactly that); damage anywhere before it is reported.
 */
export function parseLog(bytes: Buffer, describe: string): ParsedLog {
  const entries: StoreEntry[] = [];
  let offset = 0;
  let lineNumber = 0;
  while (offset < bytes.length) {
    const newline = bytes.indexOf(0x0a, offset);
    if (newline === -1) break; // torn final line: never acknowledged
    lineNumber += 1;
    const entry = decodeLine(bytes.toString('utf8', offset, newline));
    if (entry === undefined) {
      // The last complete line may be garbage from a crash (a tail of zeros after power loss),
      // unless it starts with a whole line: then a damaged newline merged two lines, and the
      // first of them is not the last.
      if (bytes.indexOf(0x0a, newline + 1) === -1 && !startsWithWholeLine(bytes.toString('utf8', offset, newline))) break;
      throw new RewindableError(
        RewindableErrorCode.LOG_CORRUPT,
        `The session log ${describe} is damaged at line ${lineNumber} (byte ${offset}): the line does not match its checksum. ` +
          'Lines after it cannot be trusted, so the session was not opened. Restore the file from a backup, or delete the session.',
        { details: { line: lineNumber, byteOffset: offset } },
      );
    }
    entries.push(entry);
    offset = newline + 1;
  }
  return { entries, validLength: offset };
}

/**
 * True when `line` begins with a complete, valid line followed by more bytes.
 * A crash only ever cuts a line short, so this shape means a damaged newline,
 * not a torn write.
 */
function startsWithWholeLine(line: string): boolean {
  for (const match of line.matchAll(/,"crc":"[0-9a-f]{8}"\}/g)) {
    const end = match.index + match[0].length;
    if (end < line.length && decodeLine(line.slice(0, end)) !== undefined) return true;
  }
  return false;
}
