import type { Hunk } from './hunks.js';

/**
 * The two diffs (base to ours, base to theirs) walked side by side and turned
 * into the places where the merged file departs from ours: a change only one
 * side made is taken from that side; changes of both sides that overlap or
 * merely touch conflict, unless they are the very same change.
 */

/** Lines [start, end) of base, ours and theirs that one region covers. */
export interface MergeRegion {
  kind: 'ours' | 'theirs' | 'conflict';
  baseStart: number;
  baseEnd: number;
  oursStart: number;
  oursEnd: number;
  theirsStart: number;
  theirsEnd: number;
}

export interface MergeInput {
  oursHunks: readonly Hunk[];
  theirsHunks: readonly Hunk[];
  ours: Int32Array;
  theirs: Int32Array;
  /** Line counts: a side's lines below a hunk are the base's, shifted by what the side added. */
  baseLength: number;
}

export function mergeRegions({ oursHunks, theirsHunks, ours, theirs, baseLength }: MergeInput): MergeRegion[] {
  const regions: MergeRegion[] = [];
  let oursIndex = 0;
  let theirsIndex = 0;
  while (oursIndex < oursHunks.length && theirsIndex < theirsHunks.length) {
    const o = oursHunks[oursIndex]!;
    const t = theirsHunks[theirsIndex]!;
    const oEnd = o.oldStart + o.oldCount;
    const tEnd = t.oldStart + t.oldCount;
    if (oEnd < t.oldStart) {
      append(regions, oneSided('ours', o, t.newStart - t.oldStart));
      oursIndex += 1;
    } else if (tEnd < o.oldStart) {
      append(regions, oneSided('theirs', t, o.newStart - o.oldStart));
      theirsIndex += 1;
    } else {
      if (!sameChange(o, t, ours, theirs)) {
        // Each side's section is its hunk, widened by the base lines only the other hunk covers (unchanged on this side).
        append(regions, {
          kind: 'conflict',
          baseStart: Math.min(o.oldStart, t.oldStart),
          baseEnd: Math.max(oEnd, tEnd),
          oursStart: o.newStart - Math.max(0, o.oldStart - t.oldStart),
          oursEnd: o.newStart + o.newCount + Math.max(0, tEnd - oEnd),
          theirsStart: t.newStart - Math.max(0, t.oldStart - o.oldStart),
          theirsEnd: t.newStart + t.newCount + Math.max(0, oEnd - tEnd),
        });
      }
      if (oEnd >= tEnd) theirsIndex += 1;
      if (tEnd >= oEnd) oursIndex += 1;
    }
  }
  for (const o of oursHunks.slice(oursIndex)) append(regions, oneSided('ours', o, theirs.length - baseLength));
  for (const t of theirsHunks.slice(theirsIndex)) append(regions, oneSided('theirs', t, ours.length - baseLength));
  return regions;
}

/** A hunk of one side alone; the other side has the base's lines there, `shift` lines further down. */
function oneSided(kind: 'ours' | 'theirs', hunk: Hunk, shift: number): MergeRegion {
  const own = { start: hunk.newStart, end: hunk.newStart + hunk.newCount };
  const other = { start: hunk.oldStart + shift, end: hunk.oldStart + shift + hunk.oldCount };
  const [oursRange, theirsRange] = kind === 'ours' ? [own, other] : [other, own];
  return {
    kind,
    baseStart: hunk.oldStart,
    baseEnd: hunk.oldStart + hunk.oldCount,
    oursStart: oursRange.start,
    oursEnd: oursRange.end,
    theirsStart: theirsRange.start,
    theirsEnd: theirsRange.end,
  };
}

/** Both sides replaced the same base lines with the same lines. */
function sameChange(o: Hunk, t: Hunk, ours: Int32Array, theirs: Int32Array): boolean {
  if (o.oldStart !== t.oldStart || o.oldCount !== t.oldCount || o.newCount !== t.newCount) return false;
  for (let line = 0; line < o.newCount; line += 1) if (ours[o.newStart + line] !== theirs[t.newStart + line]) return false;
  return true;
}

/**
 * A region that starts where the previous one ends, in ours or in theirs,
 * is joined to it: written apart, the two would share lines. Regions of
 * different kinds joined make a conflict.
 */
function append(regions: MergeRegion[], region: MergeRegion): void {
  const last = regions.at(-1);
  if (!last || (region.oursStart > last.oursEnd && region.theirsStart > last.theirsEnd)) {
    regions.push(region);
    return;
  }
  if (last.kind !== region.kind) last.kind = 'conflict';
  last.baseEnd = region.baseEnd;
  last.oursEnd = region.oursEnd;
  last.theirsEnd = region.theirsEnd;
}
