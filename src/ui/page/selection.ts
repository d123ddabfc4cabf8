import type { PreviewFile } from '../timeline-types.js';
import { displayPath } from './dom.js';

/** What "Rewind selected" sends: some files whole, or some hunks. */
export type SelectionRequest = { paths: string[] } | { hunks: string[] };

/**
 * The files and hunks chosen on one checkpoint's preview and in its files'
 * diffs. Everything is chosen until the user leaves something out, so only
 * what was left out is kept: a preview drawn again after the agent worked on
 * keeps those choices for the files and hunks it still has.
 */
export class Selection {
  private readonly filesOut = new Set<string>();
  private readonly hunksOut = new Set<string>();
  private files: PreviewFile[] = [];
  private readonly hunkIds = new Map<string, string[]>();

  /** The preview's files: what there is to choose from now. */
  update(files: readonly PreviewFile[]): void {
    this.files = files.filter((file) => file.action !== 'skip');
    for (const file of this.files) if (file.action !== 'skip') this.hunkIds.set(file.path, file.hunkIds ?? []);
  }

  /** A file's hunk ids as its diff gives them: a diff opened from a bookmark comes before any preview. */
  noteHunks(path: string, ids: readonly string[]): void {
    this.hunkIds.set(path, [...ids]);
  }

  hasFile(path: string): boolean {
    return !this.filesOut.has(path);
  }

  hasHunk(path: string, id: string): boolean {
    return this.hasFile(path) && !this.hunksOut.has(id);
  }

  /** Chooses the file whole, or leaves it out. */
  setFile(path: string, chosen: boolean): void {
    if (chosen) this.filesOut.delete(path);
    else this.filesOut.add(path);
    for (const id of this.hunkIdsOf(path)) this.hunksOut.delete(id);
  }

  /** Chooses one hunk of a file, or leaves it out; a file with none of its hunks chosen is left out. */
  setHunk(path: string, id: string, chosen: boolean): void {
    if (chosen && !this.hasFile(path)) {
      // Back from "left out": only this hunk, the one the user just chose.
      this.filesOut.delete(path);
      for (const other of this.hunkIdsOf(path)) if (other !== id) this.hunksOut.add(other);
    }
    if (chosen) this.hunksOut.delete(id);
    else this.hunksOut.add(id);
    const ids = this.hunkIdsOf(path);
    if (ids.length > 0 && ids.every((other) => this.hunksOut.has(other))) {
      this.filesOut.add(path);
      for (const other of ids) this.hunksOut.delete(other);
    }
  }

  /** Every file that would change is chosen, every hunk of each: the whole rewind. */
  isEverything(): boolean {
    return this.files.every((file) => this.hasFile(file.path) && this.hunkIdsOf(file.path).every((id) => !this.hunksOut.has(id)));
  }

  /** The files chosen, and of those some of whose hunks are left out, with how many of their hunks are chosen. */
  chosen(): { files: PreviewFile[]; partial: Array<{ file: PreviewFile; chosen: number; of: number }> } {
    const files = this.files.filter((file) => this.hasFile(file.path));
    const partial = files
      .map((file) => {
        const ids = this.hunkIdsOf(file.path);
        return { file, chosen: ids.filter((id) => !this.hunksOut.has(id)).length, of: ids.length };
      })
      .filter((entry) => entry.chosen < entry.of);
    return { files, partial };
  }

  /**
   * What to send, or why it cannot be sent. Whole files go as paths; once a
   * file has hunks left out, every chosen file goes as its chosen hunks
   * (all of a file's hunks is its whole rewind), so a chosen file without
   * hunks (binary, a mode change, too large) cannot go along.
   */
  request(cwd: string): SelectionRequest | { problem: string } {
    const { files, partial } = this.chosen();
    if (files.length === 0) return { problem: 'Nothing is selected: check a file, or a hunk in its diff.' };
    if (partial.length === 0) return { paths: files.map((file) => file.path) };
    const whole = files.find((file) => this.hunkIdsOf(file.path).length === 0);
    if (whole !== undefined) {
      return { problem: `${displayPath(whole.path, cwd)} has no hunks to choose (binary, a mode change, or not shown): leave it out, or choose every hunk of the files whose hunks you chose.` };
    }
    return { hunks: files.flatMap((file) => this.hunkIdsOf(file.path).filter((id) => !this.hunksOut.has(id))) };
  }

  private hunkIdsOf(path: string): string[] {
    return this.hunkIds.get(path) ?? [];
  }
}

const selections = new Map<string, Selection>();

/** The selection of a checkpoint's preview, kept while the page is open: the diff views and the preview share it. */
export function selectionOf(sessionId: string, checkpointId: string): Selection {
  const key = `${sessionId}/${checkpointId}`;
  let selection = selections.get(key);
  if (selection === undefined) {
    selection = new Selection();
    selections.set(key, selection);
  }
  return selection;
}

/** After a rewind the preview is another: its hunks have other ids, and everything is chosen again. */
export function forgetSelection(sessionId: string, checkpointId: string): void {
  selections.delete(`${sessionId}/${checkpointId}`);
}
