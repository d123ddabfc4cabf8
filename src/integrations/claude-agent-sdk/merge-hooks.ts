import type { HookCallbackMatcher, HookEvent } from '@anthropic-ai/claude-agent-sdk';

/** The `hooks` option of the Claude Agent SDK's `query()`. */
export type HookMap = Partial<Record<HookEvent, HookCallbackMatcher[]>>;

/**
 * Joins hook maps event by event: every matcher of every map is kept, in
 * the order given (the SDK runs all matching hooks of an event). Neither map
 * is changed.
 *
 * @example
 * const hooks = mergeHooks(options.hooks, createCheckpointHooks(manager).hooks);
 */
export function mergeHooks(...maps: Array<HookMap | undefined>): HookMap {
  const merged: HookMap = {};
  for (const map of maps) {
    for (const [event, matchers] of Object.entries(map ?? {}) as Array<[HookEvent, HookCallbackMatcher[] | undefined]>) {
      if (matchers === undefined) continue;
      merged[event] = [...(merged[event] ?? []), ...matchers];
    }
  }
  return merged;
}
