import type { CheckpointManagerOptions } from '../options.js';
import { Session } from '../session/session.js';
import { blobsNamedBy } from '../store/session-log.js';
import { forkRecords } from './fork-records.js';

export interface ForkOptions extends Omit<CheckpointManagerOptions, 'sessionId' | 'resume' | 'readOnly' | 'continue'> {
  /** The session to fork. */
  fromSession: string;
  /** The message to fork at: the fork's transcript ends with it, and it keeps every file checkpoint up to it. */
  atMessage: string;
  /** The new session's UUID. @default a new UUID */
  sessionId?: string;
}

/**
 * Writes a new session holding `source`'s records up to `atMessage` (see
 * `forkRecords`) and its own copies of the backups they name, since the source
 * may be cleaned up before the fork.
 */
export async function writeFork(source: Session, newSessionId: string, atMessage: string): Promise<void> {
  const loaded = (await source.log.load())!;
  const records = forkRecords(loaded.records, atMessage);
  const fork = await Session.open({
    storage: source.log.storage,
    root: source.root,
    sessionId: newSessionId,
    mode: 'create',
    durable: source.durable,
    maxFileBytes: source.maxFileBytes,
    confinement: source.state.confinement,
    forkedFrom: { sessionId: source.sessionId, messageId: atMessage },
  });
  try {
    const batch = fork.newBlobBatch();
    for (const hash of new Set(records.flatMap(blobsNamedBy))) {
      const read = await source.readBlob(hash);
      if (read.ok) await batch.add({ hash, bytes: read.bytes });
    }
    await fork.append(records, batch.take());
  } finally {
    await fork.close();
  }
}
