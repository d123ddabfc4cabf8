import crypto from 'node:crypto';

/** The SHA-256 of `bytes`, in hex: the name of a backup, and how a file's content is compared. */
export function sha256(bytes: Uint8Array): string {
  // One call with no Hash object to create and finish: a tracked Edit hashes twice, a scan thousands of times.
  return crypto.hash('sha256', bytes, 'hex');
}
