import fs from 'node:fs';
import type * as Source from '../../src/index.js';

/**
 * The library as the benchmarks measure it: the package as users import it,
 * built with the project's tsup configuration (`npm run bench` builds it
 * into .bench-work/dist first), not the TypeScript sources as tsx runs them.
 * tsx's transform keeps function names by wrapping every function it
 * creates in a helper call; in a profile of the rewind of 1,000 files that
 * was about a twentieth of this thread's time, none of which the built
 * package spends.
 */
const built = new URL('../../.bench-work/dist/index.js', import.meta.url);
if (!fs.existsSync(built)) throw new Error(`${built.pathname} is missing: run the benchmarks with npm run bench, which builds the library first.`);
const library = (await import(built.href)) as typeof Source;

export const CheckpointManager = library.CheckpointManager;
export type CheckpointManager = Source.CheckpointManager;
