import { RewindableError, RewindableErrorCode } from '../errors.js';
import type { FileState } from '../schemas.js';
import type { TrackedPath } from '../session/session-state.js';
import type { BlobRead } from '../store/session-log.js';
import { ComputedContents, type Goal, type GoalOutcome } from './goal.js';
import { applyChosen, hunkDigest, lineDiff, parseHunkId } from '../text/patch-hunks.js';

/**
 * A rewind of some hunks (`rewindFiles(id, { hunks })`): each file whose
 * patch (as `diffFiles` shows it, from now to the checkpoint) holds a chosen
 * hunk gets those hunks applied to what it is now; the rest of the file, and
 * every other file, stays as it is. All of a file's hunks chosen is the full
 * rewind of that file (a deletion, a recreated file, its mode). An id names
 * one diff (patch-hunks.ts), so a file changed since the diff matches none of
 * its old ids, and the rewind fails before writing anything.
 */
export function chosenHunks(ids: readonly string[], readBlob: (hash: string) => Promise<BlobRead>, what: string): Goal {
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${what}: \`hunks\` must be a non-empty array of hunk ids from diffFiles().`, { details: { option: 'hunks' } });
  }
  // Per file digest, the blocks chosen and the ids that chose them.
  const byDigest = new Map<string, Array<{ id: string; first: number; last: number }>>();
  for (const id of ids) {
    const parsed = typeof id === 'string' ? parseHunkId(id) : undefined;
    if (parsed === undefined) {
      throw new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${what}: ${JSON.stringify(id)} is not a hunk id; take them from diffFiles() (\`hunks[].id\`).`, { details: { option: 'hunks' } });
    }
    byDigest.set(parsed.digest, [...(byDigest.get(parsed.digest) ?? []), { id, ...parsed }]);
  }
  const found = new Set<string>();
  const computed = new ComputedContents();
  const digestOf = (tracked: TrackedPath, now: FileState, checkpoint: FileState) => hunkDigest(tracked.storedPath, shaOf(now), shaOf(checkpoint));
  const keep = (now: FileState): GoalOutcome => ({ kind: 'target', state: now });

  return {
    computed,
    merges: new Map(),
    needsBytes: (tracked, now, checkpoint) => byDigest.has(digestOf(tracked, now, checkpoint)),
    async resolve(tracked, observation, checkpoint) {
      const now = observation.state;
      const chosen = byDigest.get(digestOf(tracked, now, checkpoint));
      if (chosen === undefined || (now.kind !== 'file' && now.kind !== 'absent') || (checkpoint.kind !== 'file' && checkpoint.kind !== 'absent')) return keep(now);
      let target: Buffer = Buffer.alloc(0);
      if (checkpoint.kind === 'file') {
        const read = await readBlob(checkpoint.sha256);
        if (!read.ok) return keep(now); // its hunks stay unfound: the rewind fails and says which
        target = read.bytes;
      }
      const current = now.kind === 'file' ? observation.content : Buffer.alloc(0);
      if (current === undefined) throw new Error(`internal: no bytes read for ${tracked.path}`);
      const diff = lineDiff(current, target);
      if (diff === undefined) return keep(now);
      const blocks = diff.blocks;
      const picked = new Set<number>();
      for (const hunk of chosen) {
        if (hunk.last >= blocks.length) continue;
        for (let block = hunk.first; block <= hunk.last; block += 1) picked.add(block);
        found.add(hunk.id);
      }
      if (picked.size === 0) return keep(now);
      if (picked.size === blocks.length) return { kind: 'target', state: checkpoint };
      // Only a file kept on both sides can take some of its blocks: its mode stays.
      const mode = now.kind === 'file' ? now.mode : 0o644;
      return { kind: 'target', state: computed.add(applyChosen(diff, picked), mode) };
    },
    // An id the plan matched to no hunk.
    assertPlanned() {
      const missing = ids.find((id) => !found.has(id));
      if (missing === undefined) return;
      throw new RewindableError(
        RewindableErrorCode.HUNK_NOT_FOUND,
        `${what}: hunk ${missing} is not in the rewind's patch as the files are now. Its file, or its version at the checkpoint, changed since the diff; run diffFiles() again and choose from its hunks.`,
        { details: { hunk: missing } },
      );
    },
  };
}

function shaOf(state: FileState): string {
  return state.kind === 'file' ? state.sha256 : 'absent';
}
