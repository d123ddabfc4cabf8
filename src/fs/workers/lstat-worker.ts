import { serveTasks } from '../../util/worker-pool.js';
import { lstatFields } from '../lstat-fields.js';

/** A worker thread of the batch glance (glance-many.ts): lstats its part of the paths and moves the packed findings back. */

serveTasks<string[], Float64Array<ArrayBuffer>>((paths) => {
  const fields = lstatFields(paths);
  return { reply: fields, transfer: [fields.buffer] };
});
