/**
 * Tools built on rewindable's own Write, Edit and NotebookEdit back their
 * files up themselves; `trackTools` leaves them alone so a call is not
 * tracked and recorded twice. The mark is on `execute`, so it survives
 * `{ ...writeTool(manager), needsApproval: true }`.
 */
const selfTrackingExecutes = new WeakSet<object>();

export function markTracksItself<Execute extends object>(execute: Execute): Execute {
  selfTrackingExecutes.add(execute);
  return execute;
}

export function tracksItself(tool: { execute?: unknown }): boolean {
  return typeof tool.execute === 'function' && selfTrackingExecutes.has(tool.execute);
}
