// Starts a worker module from the TypeScript sources (the tests run them so): Node 20 cannot load a `.ts`
// file as a worker's entry, even under tsx's ESM loader, so this entry installs tsx's require hook and
// requires the module through it. The built package never uses it: its workers are JavaScript.
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
require('tsx/cjs');
require(workerData.typescriptWorker);
