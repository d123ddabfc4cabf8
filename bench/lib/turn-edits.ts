import fs from 'node:fs';

/**
 * Replaces the first line of a file with one naming the turn: a one-line
 * change, written in place as an editor or `sed -i` would leave it (new
 * content, same path). Returns the new bytes.
 */
export function editFirstLine(file: string, turn: string): Buffer {
  const text = fs.readFileSync(file, 'utf8');
  const end = text.indexOf('\n');
  const bytes = Buffer.from(`// Changed in turn ${turn}.${end === -1 ? '' : text.slice(end)}`);
  fs.writeFileSync(file, bytes);
  return bytes;
}
