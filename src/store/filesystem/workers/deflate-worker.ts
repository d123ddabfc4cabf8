import { deflateRawSync } from 'node:zlib';
import { serveTasks } from '../../../util/worker-pool.js';

/**
 * A worker thread of the bundle compressor (why: `compressorPool` in
 * blob-placement.ts): deflates one bundle's bytes, moved here, and moves the result back.
 */

serveTasks<Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>>((raw) => {
  // Copied into a buffer of its own: zlib's output may be a slice of a larger one, which must not be moved whole.
  const compressed = new Uint8Array(deflateRawSync(raw, { level: 1 }));
  return { reply: compressed, transfer: [compressed.buffer] };
});
