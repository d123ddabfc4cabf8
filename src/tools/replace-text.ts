import { toolFailed } from './tool-errors.js';

export interface Replacement {
  text: string;
  /** How many occurrences were replaced. */
  count: number;
}

/**
 * Exact string replacement for Edit, keeping the file's line endings.
 *
 * Agents usually send `\n` line breaks whatever the file uses. So the
 * strings are first given the file's dominant line ending (`\r\n` when the
 * file has more CRLF than bare LF breaks, else `\n`) and matched exactly
 * against the raw text; only when that finds nothing are the strings tried
 * exactly as given, which covers the odd region of a mixed file. An
 * `old_string` with a carriage return of its own is tried the other way
 * round, as given first: it says which endings it means, and in a mixed
 * file converting it could match other places. Nothing outside the
 * replaced text is rewritten.
 */
export function replaceText(fileText: string, oldString: string, newString: string, replaceAll: boolean, filePath: string): Replacement {
  const ending = dominantLineEnding(fileText);
  const asGiven = { search: oldString, replacement: newString };
  const converted = { search: withLineEnding(oldString, ending), replacement: withLineEnding(newString, ending) };
  const [first, second] = oldString.includes('\r') ? [asGiven, converted] : [converted, asGiven];
  let { search, replacement } = first;
  let count = countOccurrences(fileText, search);
  if (count === 0 && second.search !== search) {
    ({ search, replacement } = second);
    count = countOccurrences(fileText, search);
  }
  if (count === 0) {
    throw toolFailed(
      'Edit',
      `old_string was not found in ${filePath}. It must match the file's text exactly, including whitespace and indentation; read the file again and copy the text to replace.`,
      { path: filePath },
    );
  }
  if (count > 1 && !replaceAll) {
    throw toolFailed(
      'Edit',
      `old_string was found ${count} times in ${filePath}. Include more surrounding lines in old_string so it matches exactly one place, or set replace_all to true to replace all ${count}.`,
      { path: filePath, occurrences: count },
    );
  }
  if (replaceAll) return { text: fileText.split(search).join(replacement), count };
  const index = fileText.indexOf(search);
  // Sliced, not String.replace: `$&` and friends in new_string must stay literal.
  return { text: fileText.slice(0, index) + replacement + fileText.slice(index + search.length), count };
}

export function dominantLineEnding(text: string): '\r\n' | '\n' {
  let crlf = 0;
  let lf = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    if (index > 0 && text.charCodeAt(index - 1) === 13) crlf += 1;
    else lf += 1;
  }
  return crlf > lf ? '\r\n' : '\n';
}

/** `text` with every line break (`\r\n` or `\n`) written as `ending`. */
export function withLineEnding(text: string, ending: '\r\n' | '\n'): string {
  const unix = text.includes('\r\n') ? text.replaceAll('\r\n', '\n') : text;
  return ending === '\n' ? unix : unix.replaceAll('\n', '\r\n');
}

function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length)) count += 1;
  return count;
}
