import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonNumber, parseJson, stringifyJson } from '../../src/tools/notebook-json.js';

describe('notebook JSON keeps what the edit did not touch', () => {
  it('reads and writes 1-space indented JSON back to the same text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value, null, 1);
        expect(stringifyJson(parseJson(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps numbers as they were written (Python floats, big integers) and reads strings with escapes', () => {
    const text = '{\n "a": 1.0,\n "b": 1e-05,\n "c": 12345678901234567890,\n "d": -0.0,\n "e": "tab\\there \\"quoted\\" \\\\ \\u001b[0m é",\n "f": "ends with backslash \\\\"\n}';
    const value = parseJson(text) as Record<string, unknown>;
    expect(value.a).toEqual(new JsonNumber('1.0'));
    expect(value.e).toBe('tab\there "quoted" \\ \u001b[0m é');
    expect(value.f).toBe('ends with backslash \\');
    expect(stringifyJson(value as never)).toBe(text);
  });

  it('treats a "__proto__" key as data, and throws SyntaxError for text that is not JSON', () => {
    const value = parseJson('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(() => parseJson('{"cells": [')).toThrow(SyntaxError);
  });
});
