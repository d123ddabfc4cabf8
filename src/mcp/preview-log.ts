import type { RewindFilesReady } from '../rewind/result.js';

/**
 * The previews made in one MCP connection. `rewind_files` writes only what
 * the model has seen a preview of: a rewind discards work, so it first has
 * to be looked at. A preview counts for the same checkpoint and the same
 * `paths` only, and only while a dry run still gives what it showed (the
 * same files, actions, line counts and conflicts). A rewind uses its preview
 * up, since it changes what the preview showed.
 */
export class PreviewLog {
  private readonly previewed = new Map<string, string>();

  add(sessionId: string, checkpointId: string, paths: readonly string[] | undefined, preview: RewindFilesReady): void {
    this.previewed.set(key(sessionId, checkpointId, paths), fingerprintOf(preview));
  }

  /** What the preview showed, as `fingerprintOf` puts it; undefined when there was none. */
  shown(sessionId: string, checkpointId: string, paths: readonly string[] | undefined): string | undefined {
    return this.previewed.get(key(sessionId, checkpointId, paths));
  }

  /** Forgets the preview once the rewind it allowed has written. */
  use(sessionId: string, checkpointId: string, paths: readonly string[] | undefined): void {
    this.previewed.delete(key(sessionId, checkpointId, paths));
  }
}

/** What a preview showed that a rewind must still match: each file's action, line counts and conflict, and what is left alone. */
export function fingerprintOf(preview: RewindFilesReady): string {
  return JSON.stringify([preview.files.map((file) => [file.path, file.action, file.insertions, file.deletions, file.conflict]), preview.skipped.map((skip) => [skip.path, skip.reason])]);
}

const key = (sessionId: string, checkpointId: string, paths: readonly string[] | undefined) =>
  JSON.stringify([sessionId.toLowerCase(), checkpointId.toLowerCase(), paths === undefined ? null : [...paths].sort()]);
