/**
 * The protocol's framing: one JSON message per line, UTF-8, `\n` terminated.
 * JSON text never holds a raw newline, so a line is a message; clients read
 * it with `readline()`, as the MCP stdio transport frames its messages.
 */

/** The longest line read: a longer one is dropped as it arrives and answered with an error. */
export const maxLineBytes = 16 * 1024 * 1024;

/** One line of input: its text, or why it has none. */
export type Line = { kind: 'text'; text: string } | { kind: 'oversized'; bytes: number } | { kind: 'not-utf8' };

/**
 * Splits a byte stream into lines. It never holds more than `maxBytes` of
 * one line: past that, the line's bytes are counted and dropped, and the line
 * is reported as `oversized` when its newline (or the end of input) comes.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private held = 0;
  /** Bytes of the current line, once it is over the cap (0 while within it). */
  private dropped = 0;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  constructor(private readonly maxBytes = maxLineBytes) {}

  /** The lines `chunk` completes. */
  push(chunk: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      this.take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return lines;
      lines.push(this.finish());
      start = newline + 1;
    }
  }

  /** The last line, when the input ended without a newline after it. */
  end(): Line[] {
    return this.held > 0 || this.dropped > 0 ? [this.finish()] : [];
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropped > 0) {
      this.dropped += piece.length;
    } else if (this.held + piece.length > this.maxBytes) {
      this.dropped = this.held + piece.length;
      this.parts = [];
      this.held = 0;
    } else {
      this.parts.push(piece);
      this.held += piece.length;
    }
  }

  private finish(): Line {
    if (this.dropped > 0) {
      const bytes = this.dropped;
      this.dropped = 0;
      return { kind: 'oversized', bytes };
    }
    const bytes = Buffer.concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    try {
      return { kind: 'text', text: this.decoder.decode(bytes) };
    } catch {
      return { kind: 'not-utf8' };
    }
  }
}

/**
 * One message as one line. JSON already escapes `\n` and `\r` in strings;
 * U+2028 and U+2029 are escaped too, since some line readers split on them.
 * Throws (writing nothing) for a value JSON cannot hold.
 */
export function messageLine(message: unknown): string {
  return `${JSON.stringify(message).replace(/[\u2028\u2029]/g, (separator) => `\\u${separator.charCodeAt(0).toString(16)}`)}\n`;
}
