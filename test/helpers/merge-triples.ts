import { seededRandom } from '../../bench/lib/source-text.js';

/**
 * Seeded random (base, ours, theirs) triples for checking a three-way merge
 * against git. Each side makes a few line edits to the base, often near one
 * spot so that edits overlap, touch or coincide; some triples repeat one
 * side's edits on the other, leave a side untouched, or empty a file. Files
 * use LF, CRLF or both, and may lack a last newline.
 */

export interface MergeTriple {
  seed: number;
  base: Buffer;
  ours: Buffer;
  theirs: Buffer;
}

interface Line {
  text: string;
  eol: '\n' | '\r\n';
}

interface FileModel {
  lines: Line[];
  finalNewline: boolean;
}

type Edit = { kind: 'replace' | 'insert'; at: number; texts: string[] } | { kind: 'delete'; at: number; count: number };

// Few distinct lines, so most lines repeat: the cases where diffs can align lines in several equally short ways.
const COMMON_TEXTS = ['', '', '}', '{', 'a', 'b', 'c', '  return value;', '// comment', 'x = 1;', 'end', '    }', '\t\tindented'];

/**
 * One triple. `large` ones have thousands of lines and hundreds of scattered
 * edits per side, enough for git's diff to hit its cost cut-offs.
 */
export function generateTriple(seed: number, size: 'small' | 'large' | 'huge' = 'small'): MergeTriple {
  const large = size !== 'small';
  const random = seededRandom(seed);
  const below = (limit: number) => Math.floor(random() * limit);
  const chance = (probability: number) => random() < probability;
  const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;

  const eolStyle = pick(['lf', 'lf', 'lf', 'crlf', 'crlf', 'mixed'] as const);
  const eol = (): Line['eol'] => (eolStyle === 'lf' ? '\n' : eolStyle === 'crlf' ? '\r\n' : pick(['\n', '\r\n'] as const));
  let unique = 0;
  const text = () => (chance(0.25) ? `line ${seed}-${(unique += 1)}` : pick(COMMON_TEXTS));
  const texts = (count: number) => Array.from({ length: count }, text);

  const baseLength = size === 'huge' ? 40_000 + below(10_000) : large ? 1500 + below(2500) : chance(0.08) ? 0 : chance(0.3) ? 1 + below(4) : 4 + below(36);
  const base: FileModel = { lines: texts(baseLength).map((line) => ({ text: line, eol: eol() })), finalNewline: !chance(0.2) };
  const hotspot = below(baseLength + 1);
  // Large files get their edits in a few dense zones, leaving long unchanged runs between them.
  const zones = Array.from({ length: 1 + below(4) }, () => below(baseLength + 1));
  const zoned = size === 'huge' || (large && chance(0.5));

  const randomEdits = (count: number): Edit[] =>
    Array.from({ length: count }, () => {
      const at = zoned ? pick(zones) + below(size === 'huge' ? 3000 : 300) : !large && chance(0.6) ? Math.max(0, hotspot + below(7) - 3) : below(baseLength + 2);
      const kind = pick(['replace', 'replace', 'insert', 'delete'] as const);
      return kind === 'delete' ? { kind, at, count: 1 + below(3) } : { kind, at, texts: texts(1 + below(3)) };
    });
  const apply = (edits: readonly Edit[], toggleFinalNewline: boolean): FileModel => {
    const lines = [...base.lines];
    for (const edit of edits) {
      const at = Math.min(edit.at, lines.length);
      if (edit.kind === 'delete') lines.splice(at, edit.count);
      else if (edit.kind === 'insert') lines.splice(at, 0, ...edit.texts.map((line) => ({ text: line, eol: eol() })));
      else lines.splice(at, 1, ...edit.texts.map((line) => ({ text: line, eol: eol() })));
    }
    if (!large && chance(0.05)) lines.length = 0;
    return { lines, finalNewline: toggleFinalNewline ? !base.finalNewline : base.finalNewline };
  };

  const editCount = () => (size === 'huge' ? 2000 + below(2000) : large ? 100 + below(400) : 1 + below(4));
  const oursEdits = chance(0.12) ? [] : randomEdits(editCount());
  const oursToggle = chance(0.1);
  const ours = apply(oursEdits, oursToggle);
  const theirsPlan = pick(['own', 'own', 'own', 'own', 'unchanged', 'same', 'same and more'] as const);
  const theirsEdits = theirsPlan === 'unchanged' ? [] : theirsPlan === 'same' ? oursEdits : theirsPlan === 'same and more' ? [...oursEdits, ...randomEdits(1 + below(2))] : randomEdits(editCount());
  // Repeating ours' edits draws fresh line endings for inserted lines in a mixed file, so "same" may still differ slightly there.
  const theirs = apply(theirsEdits, theirsPlan === 'same' ? oursToggle : chance(0.1));
  return { seed, base: render(base), ours: render(ours), theirs: render(theirs) };
}

function render(file: FileModel): Buffer {
  const text = file.lines.map((line, index) => (index === file.lines.length - 1 && !file.finalNewline ? line.text : line.text + line.eol)).join('');
  return Buffer.from(text, 'utf8');
}
