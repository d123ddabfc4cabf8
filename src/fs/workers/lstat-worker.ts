import { threadId } from 'node:worker_threads';
import { serveTasks } from '../../util/worker-pool.js';
import { lstatFields } from '../lstat-fields.js';

/** A worker thread of the batch glance (glance-many.ts): lstats its part of the paths and moves the packed findings back. */

export interface LstatReply {
  fields: Float64Array<ArrayBuffer>;
  /** The thread that ran the part. */
  threadId: number;
}

serveTasks<string[], LstatReply>((paths) => {
  const fields = lstatFields(paths);
  return { reply: { fields, threadId }, transfer: [fields.buffer] };
});
