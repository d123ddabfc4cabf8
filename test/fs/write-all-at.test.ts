import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { writeAllAt } from '../../src/fs/flush.js';

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-write-all-at-'));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

describe('writeAllAt', () => {
  it('writes the buffers one after another at the position, leaving the bytes before it alone', () => {
    let run = 0;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 6 }), (existing, buffers) => {
        const file = path.join(directory, `case-${run++}`);
        fs.writeFileSync(file, existing);
        const fd = fs.openSync(file, 'r+');
        try {
          writeAllAt(fd, buffers, existing.length);
        } finally {
          fs.closeSync(fd);
        }
        expect(fs.readFileSync(file)).toEqual(Buffer.concat([existing, ...buffers]));
      }),
      { numRuns: 200 },
    );
  });

  it('overwrites from a position inside the file', () => {
    const file = path.join(directory, 'inside');
    fs.writeFileSync(file, 'abcdefghij');
    const fd = fs.openSync(file, 'r+');
    try {
      writeAllAt(fd, [Buffer.from('XY'), Buffer.alloc(0), Buffer.from('Z')], 3);
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('abcXYZghij');
  });
});
