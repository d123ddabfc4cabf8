import { describe, expect, it } from 'vitest';
import { LineSplitter, messageLine, type Line } from '../../src/server/framing.js';

/** The line framing alone: chunk boundaries fall anywhere in a pipe. */

function split(chunks: Buffer[], maxBytes?: number): Line[] {
  const splitter = new LineSplitter(maxBytes);
  return [...chunks.flatMap((chunk) => splitter.push(chunk)), ...splitter.end()];
}

const bytes = (text: string) => Buffer.from(text, 'utf8');
const oneByOne = (buffer: Buffer) => [...buffer].map((byte) => Buffer.from([byte]));

describe('LineSplitter', () => {
  it('gives the same lines whether the input comes at once or byte by byte (a multi-byte character split too)', () => {
    const input = bytes('{"a":"é€😀"}\n\n{"b":2}\r\nlast');
    const expected: Line[] = [
      { kind: 'text', text: '{"a":"é€😀"}' },
      { kind: 'text', text: '' },
      { kind: 'text', text: '{"b":2}\r' },
      { kind: 'text', text: 'last' },
    ];

    expect(split([input])).toEqual(expected);
    expect(split(oneByOne(input))).toEqual(expected);
  });

  it('a line over the cap is reported once, with its size, and the next line is read', () => {
    const input = bytes(`${'x'.repeat(11)}\n${'y'.repeat(10)}\n${'z'.repeat(25)}`);

    expect(split([input], 10)).toEqual([
      { kind: 'oversized', bytes: 11 },
      { kind: 'text', text: 'y'.repeat(10) },
      { kind: 'oversized', bytes: 25 },
    ]);
    expect(split(oneByOne(input), 10)).toEqual(split([input], 10));
  });

  it('bytes that are not UTF-8 make a not-utf8 line, and the splitter goes on', () => {
    expect(split([Buffer.from([0x22, 0xc3, 0x28, 0x22, 0x0a]), bytes('"ok"\n')])).toEqual([{ kind: 'not-utf8' }, { kind: 'text', text: '"ok"' }]);
  });
});

describe('messageLine', () => {
  it('is one line of JSON that parses back to the message, line separators escaped', () => {
    const message = { text: 'a\nb\rc\u2028d\u2029e' };
    const line = messageLine(message);

    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029]/);
    expect(JSON.parse(line)).toEqual(message);
  });
});
