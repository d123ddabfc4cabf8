import { serveTasks } from '../../util/worker-pool.js';
import { lstatFields, pathSeparator } from '../lstat-fields.js';

/** A worker thread of the batch glance (glance-many.ts): lstats its part of the paths and moves the packed findings back. */

serveTasks<string, Float64Array<ArrayBuffer>>((joined) => {
  const fields = lstatFields(joined.split(pathSeparator));
  return { reply: fields, transfer: [fields.buffer] };
});
