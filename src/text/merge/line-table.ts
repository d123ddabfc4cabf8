import { splitTextLines } from '../line-stats.js';

/**
 * The three files of a merge cut into lines, each line given a number that
 * stands for its exact bytes. Every later step compares lines, never bytes,
 * so one number per distinct line (shared by all three files) makes each
 * comparison a single integer test.
 */

/** One file of the merge, cut after every `\n`; a last line without one still counts. */
export interface LineFile {
  bytes: Buffer;
  /** Where each line starts in `bytes`, plus one last entry: the file's length. */
  starts: Int32Array;
  /** One number per line: equal numbers mean byte-identical lines, terminator included. */
  ids: Int32Array;
}

/**
 * A file cut into lines, numbered from `idOf`: the table every file of one
 * merge shares, so that equal lines in different files get equal numbers.
 */
export function toLineFile(bytes: Buffer, idOf: Map<string, number>): LineFile {
  // latin1 maps each byte to one character: equal strings are equal bytes, and lengths are byte counts.
  const lines = splitTextLines(bytes.toString('latin1'));
  const starts = new Int32Array(lines.length + 1);
  const ids = new Int32Array(lines.length);
  lines.forEach((line, index) => {
    let id = idOf.get(line);
    if (id === undefined) {
      id = idOf.size;
      idOf.set(line, id);
    }
    ids[index] = id;
    starts[index + 1] = starts[index]! + line.length;
  });
  return { bytes, starts, ids };
}

/** Lines [from, to) of a file, exactly as they are in it. */
export function lineBytes(file: LineFile, from: number, to: number): Buffer {
  return file.bytes.subarray(file.starts[from], file.starts[to]);
}

/** Whether a line ends with `\n` (only a file's last line can fail to). */
export function endsWithNewline(file: LineFile, line: number): boolean {
  return file.bytes[file.starts[line + 1]! - 1] === 0x0a;
}

/** Whether a line ends with `\r\n`. */
export function endsWithCrlf(file: LineFile, line: number): boolean {
  const end = file.starts[line + 1]!;
  return end - file.starts[line]! >= 2 && file.bytes[end - 1] === 0x0a && file.bytes[end - 2] === 0x0d;
}
