import { isBinary } from '../text/line-stats.js';
import { toolFailed } from './tool-errors.js';

const byteOrderMark = Buffer.from([0xef, 0xbb, 0xbf]);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A text file's content as the tools see it: the text without its byte order mark, and whether it had one. */
export interface TextContent {
  text: string;
  byteOrderMark: boolean;
}

/**
 * Decodes a file for text editing. Binary files (git's rule: a NUL byte in
 * the first 8000 bytes) and bytes that are not UTF-8 are refused rather than
 * mangled: a lossy decode would silently rewrite every byte it did not
 * understand.
 */
export function decodeTextFile(tool: string, filePath: string, bytes: Buffer): TextContent {
  if (isBinary(bytes)) {
    throw toolFailed(tool, `${filePath} is a binary file (it contains NUL bytes); ${tool} only changes text files. Use Write to replace it whole.`, {
      path: filePath,
    });
  }
  const hasMark = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  try {
    return { text: strictUtf8.decode(hasMark ? bytes.subarray(3) : bytes), byteOrderMark: hasMark };
  } catch {
    throw toolFailed(tool, `${filePath} is not valid UTF-8 text; ${tool} only changes UTF-8 files. Use Write to replace it whole.`, { path: filePath });
  }
}

export function encodeTextFile(content: TextContent): Buffer {
  const body = Buffer.from(content.text, 'utf8');
  return content.byteOrderMark ? Buffer.concat([byteOrderMark, body]) : body;
}
