/**
 * The previews made in one MCP connection. `rewind_files` writes only what
 * the model has seen a preview of: a rewind discards work, so it first has
 * to be looked at. A rewind uses its preview up, since it changes what the
 * preview showed.
 */
export class PreviewLog {
  private readonly previewed = new Set<string>();

  add(sessionId: string, checkpointId: string): void {
    this.previewed.add(key(sessionId, checkpointId));
  }

  has(sessionId: string, checkpointId: string): boolean {
    return this.previewed.has(key(sessionId, checkpointId));
  }

  /** Forgets the preview once the rewind it allowed has written. */
  use(sessionId: string, checkpointId: string): void {
    this.previewed.delete(key(sessionId, checkpointId));
  }
}

const key = (sessionId: string, checkpointId: string) => `${sessionId.toLowerCase()}/${checkpointId.toLowerCase()}`;
