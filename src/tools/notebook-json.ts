/**
 * JSON for notebooks, read and written so that the parts of a notebook a
 * tool did not touch come back byte for byte.
 *
 * Numbers keep their source text (`JSON.parse` would turn Python's `1.0` into
 * `1` and round integers past 2^53), and the output is what Jupyter's
 * `json.dumps(indent=1, ensure_ascii=False)` writes: one space per level,
 * `": "` between key and value, empty containers as `[]` and `{}`. Object keys
 * keep their order (Jupyter's are sorted already).
 */

/** A number as it was written in the file. */
export class JsonNumber {
  constructor(readonly text: string) {}

  valueOf(): number {
    return Number(this.text);
  }
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Parses JSON text; throws `SyntaxError` (with `JSON.parse`'s message) when it is not JSON. */
export function parseJson(text: string): JsonValue {
  JSON.parse(text); // validates, with the engine's error messages; the reader below may then trust the syntax
  return new JsonReader(text).read();
}

/** Serializes like Jupyter, with `\n` line breaks and no trailing newline. */
export function stringifyJson(value: JsonValue): string {
  const parts: string[] = [];
  write(value, '', parts);
  return parts.join('');
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

function write(value: JsonValue, indent: string, parts: string[]): void {
  if (value === null || typeof value === 'boolean') parts.push(String(value));
  else if (typeof value === 'string') parts.push(JSON.stringify(value));
  else if (value instanceof JsonNumber) parts.push(value.text);
  else if (Array.isArray(value)) {
    if (value.length === 0) return void parts.push('[]');
    const inner = `${indent} `;
    parts.push('[');
    value.forEach((item, index) => {
      parts.push(index === 0 ? '\n' : ',\n', inner);
      write(item, inner, parts);
    });
    parts.push('\n', indent, ']');
  } else {
    const keys = Object.keys(value);
    if (keys.length === 0) return void parts.push('{}');
    const inner = `${indent} `;
    parts.push('{');
    keys.forEach((key, index) => {
      parts.push(index === 0 ? '\n' : ',\n', inner, JSON.stringify(key), ': ');
      write(value[key]!, inner, parts);
    });
    parts.push('\n', indent, '}');
  }
}

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A reader for text already known to be valid JSON. */
class JsonReader {
  private position = 0;

  constructor(private readonly text: string) {}

  read(): JsonValue {
    this.skipSpace();
    const char = this.text[this.position];
    if (char === '{') return this.readObject();
    if (char === '[') return this.readArray();
    if (char === '"') return this.readString();
    if (char === 't') return this.readLiteral('true', true);
    if (char === 'f') return this.readLiteral('false', false);
    if (char === 'n') return this.readLiteral('null', null);
    numberPattern.lastIndex = this.position;
    const match = numberPattern.exec(this.text)!;
    this.position += match[0].length;
    return new JsonNumber(match[0]);
  }

  private readObject(): JsonObject {
    const object: JsonObject = {};
    this.position += 1;
    this.skipSpace();
    if (this.text[this.position] === '}') {
      this.position += 1;
      return object;
    }
    for (;;) {
      this.skipSpace();
      const key = this.readString();
      this.skipSpace();
      this.position += 1; // ':'
      // defineProperty: a "__proto__" key is data, as JSON.parse treats it.
      Object.defineProperty(object, key, { value: this.read(), enumerable: true, writable: true, configurable: true });
      this.skipSpace();
      if (this.text[this.position++] === '}') return object;
    }
  }

  private readArray(): JsonValue[] {
    const array: JsonValue[] = [];
    this.position += 1;
    this.skipSpace();
    if (this.text[this.position] === ']') {
      this.position += 1;
      return array;
    }
    for (;;) {
      array.push(this.read());
      this.skipSpace();
      if (this.text[this.position++] === ']') return array;
    }
  }

  private readString(): string {
    const start = this.position;
    let end = start + 1;
    for (;;) {
      end = this.text.indexOf('"', end);
      let backslashes = 0;
      while (this.text.charCodeAt(end - 1 - backslashes) === 92) backslashes += 1;
      if (backslashes % 2 === 0) break;
      end += 1;
    }
    this.position = end + 1;
    const raw = this.text.slice(start, end + 1);
    return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  private readLiteral<T>(word: string, value: T): T {
    this.position += word.length;
    return value;
  }

  private skipSpace(): void {
    for (;;) {
      const code = this.text.charCodeAt(this.position);
      if (code !== 32 && code !== 10 && code !== 13 && code !== 9) return;
      this.position += 1;
    }
  }
}
