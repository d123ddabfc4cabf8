import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeLine, encodeLines, parseLog } from '../../src/store/filesystem/log-lines.js';

// The line format, spelled out: the entry's JSON with `"crc"` (its CRC-32 over the JSON's UTF-8 bytes) as the last field.
const expectedLine = (entry: object) => {
  const json = JSON.stringify(entry);
  return `${json.slice(0, -1)},"crc":"${crc32(Buffer.from(json)).toString(16).padStart(8, '0')}"}\n`;
};

const entryArbitrary = fc.record({
  type: fc.string({ minLength: 1, maxLength: 12 }),
  path: fc.string({ unit: 'binary', maxLength: 40 }),
  size: fc.nat(),
  nested: fc.array(fc.string({ unit: 'grapheme', maxLength: 8 }), { maxLength: 4 }),
});

describe('log lines', () => {
  it('encode entries back to back, each with the checksum of its own UTF-8 bytes, and parse back to the same entries', () => {
    fc.assert(
      fc.property(fc.array(entryArbitrary, { minLength: 1, maxLength: 5 }), (entries) => {
        const bytes = encodeLines(entries);
        expect(bytes.toString('utf8')).toBe(entries.map(expectedLine).join(''));
        expect(parseLog(bytes, 'the encoded lines').entries).toEqual(entries);
      }),
      { numRuns: 500 },
    );
  });

  it('encode non-ASCII paths and lone surrogates as JSON does', () => {
    const entries = [
      { type: 'track', path: 'docs/résumé – 日本語 🎉.md' },
      { type: 'message', text: 'a lone surrogate \ud800 stays escaped' },
    ];
    expect(encodeLines(entries).toString('utf8')).toBe(entries.map(expectedLine).join(''));
    expect(encodeLine(entries[0]!)).toBe(expectedLine(entries[0]!));
  });

  it('refuses an entry that carries its own crc field', () => {
    expect(() => encodeLines([{ type: 'track', crc: '00000000' }])).toThrow(TypeError);
  });
});
