/**
 * Deterministic, source-like text for generated projects: TypeScript-shaped
 * modules built from a vocabulary, so that they compress roughly as real
 * source does (zlib 3-5×), unlike repeated filler (which compresses ~100×)
 * or random bytes (which do not compress at all). Every file differs.
 */

const words = (
  'account action adapter agent alpha amount apply archive array async batch before binary block buffer build cache ' +
  'callback cancel change channel check chunk client clone close column commit compare config connect content context ' +
  'convert count create cursor data debug decode default delete delta detect digest directory dispatch document draft ' +
  'edge emit encode entry error event export extend factory fetch field filter flush format frame handle hash header ' +
  'history index inline input insert item join journal key label layer limit line link listen load local lock logger ' +
  'manager mapping match merge message meta method mirror mode module monitor mount name node notify offset option ' +
  'order origin output owner packet page parse patch path pending pipe plan policy pool prefix process profile project ' +
  'prompt proxy query queue range reader record reduce refresh region render replace report request reset resolve ' +
  'result retry revision rewind route sample scan schema scope search segment select send session shadow signal size ' +
  'snapshot source split stage state status store stream string summary symbol table target task template token ' +
  'trace track transform tree trigger update upload user value version view watch window worker writer'
).split(' ');
const types = ['string', 'number', 'boolean', 'Buffer', 'Date', 'unknown', 'Record<string, number>', 'Map<string, string>', 'string[]', 'Promise<void>'];
const operators = ['+', '-', '*', '===', '!==', '<', '>=', '&&', '||', '??'];

/** A small, fast seeded PRNG (mulberry32): the same seed always generates the same project. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Identifiers repeat across a code base; drawing them from one shared pool also keeps generation fast. */
const identifierPool = (() => {
  const random = seededRandom(0x5eed);
  const pick = () => words[Math.floor(random() * words.length)]!;
  const capital = (word: string) => word[0]!.toUpperCase() + word.slice(1);
  const camel: string[][] = [[], [], [], []];
  for (let parts = 1; parts <= 3; parts++) {
    for (let index = 0; index < 8192; index++) {
      let name = pick();
      for (let part = 1; part < parts; part++) name += capital(pick());
      camel[parts]!.push(name);
    }
  }
  return { camel, pascal: camel.map((names) => names.map(capital)) };
})();

class Vocabulary {
  constructor(private readonly random: () => number) {}

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  word(): string {
    return this.pick(words);
  }

  camel(parts: 1 | 2 | 3 = 2): string {
    return identifierPool.camel[parts]![Math.floor(this.random() * 8192)]!;
  }

  pascal(parts: 1 | 2 | 3 = 2): string {
    return identifierPool.pascal[parts]![Math.floor(this.random() * 8192)]!;
  }

  number(): number {
    return Math.floor(this.random() * 10_000);
  }
}

/** One TypeScript-like module of about `targetBytes` bytes. */
export function sourceFile(seed: number, targetBytes: number): string {
  const random = seededRandom(seed);
  const vocabulary = new Vocabulary(random);
  const lines: string[] = [];
  let size = 0;
  const push = (line: string) => {
    lines.push(line);
    size += line.length + 1;
  };
  push(`// Module ${seed}: ${vocabulary.word()} ${vocabulary.word()} for the ${vocabulary.word()} ${vocabulary.word()}.`);
  for (let index = 0; index < 3 + Math.floor(random() * 4); index++) {
    push(`import { ${vocabulary.pascal()}, ${vocabulary.camel()} } from '../${vocabulary.word()}/${vocabulary.camel()}.js';`);
  }
  push('');
  while (size < targetBytes) {
    const kind = random();
    if (kind < 0.2) {
      const name = vocabulary.pascal(3);
      push(`/** The ${vocabulary.word()} of a ${vocabulary.word()}, kept ${vocabulary.word()} until ${vocabulary.word()}. */`);
      push(`export interface ${name} {`);
      for (let field = 0; field < 2 + Math.floor(random() * 6); field++) {
        push(`  ${vocabulary.camel()}${random() < 0.3 ? '?' : ''}: ${vocabulary.pick(types)};`);
      }
      push('}');
    } else if (kind < 0.85) {
      const name = vocabulary.camel(3);
      const parameters = Array.from({ length: 1 + Math.floor(random() * 3) }, () => `${vocabulary.camel()}: ${vocabulary.pick(types)}`);
      push(`export ${random() < 0.4 ? 'async ' : ''}function ${name}(${parameters.join(', ')}): ${vocabulary.pick(types)} {`);
      for (let statement = 0; statement < 3 + Math.floor(random() * 9); statement++) {
        const roll = random();
        if (roll < 0.3) push(`  const ${vocabulary.camel()} = ${vocabulary.camel()}.${vocabulary.camel()}(${vocabulary.camel()}, ${vocabulary.number()});`);
        else if (roll < 0.5) push(`  if (${vocabulary.camel()} ${vocabulary.pick(operators)} ${vocabulary.number()}) return ${vocabulary.camel()};`);
        else if (roll < 0.65) push(`  // ${vocabulary.word()} the ${vocabulary.word()} before ${vocabulary.word()}: ${vocabulary.word()} ${vocabulary.word()} ${vocabulary.word()}.`);
        else if (roll < 0.8) push(`  for (const ${vocabulary.word()} of ${vocabulary.camel()}) ${vocabulary.camel()}.push(${vocabulary.word()}.${vocabulary.camel()});`);
        else push(`  throw new Error(\`${vocabulary.word()} ${vocabulary.word()} \${${vocabulary.camel()}} ${vocabulary.word()}\`);`);
      }
      push('}');
    } else {
      push(`export const ${vocabulary.camel(2).toUpperCase()}_${vocabulary.number()} = '${vocabulary.word()}-${vocabulary.word()}-${vocabulary.number()}';`);
    }
    push('');
  }
  return lines.join('\n');
}
