import { randomUUID } from 'node:crypto';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';

/** Prompts passed through `prompt()` whose turn has not started yet. Bounded: a message that never starts a turn must not pile up. */
const maxPending = 100;

/** Past this many pasted entries and blocks in all, the CLI ignores a message's `pasted_content`. */
const maxPastedParts = 1000;

/** What `PromptIds.take` found for one prompt. */
export interface PromptMatch {
  /** The UUID of the message the prompt came from: the last one, when the CLI ran several as one prompt. */
  uuid: string | undefined;
  /** Messages still waiting when no message matched: the prompt's text is not the text of any of them. */
  waiting: number;
  /** Of those, the messages the prompt used up all the same (their texts are in it, in order): they start no turn of their own. */
  usedUp: string[];
}

/**
 * Remembers the UUIDs of the user messages a harness streams to `query()`,
 * so the UserPromptSubmit hook, which is given the prompt's text but not the
 * message's UUID, can key the checkpoint by that UUID: the id the harness,
 * the CLI's transcript and the SDK's own `rewindFiles()` all use.
 *
 * The CLI submits streamed messages in order, and those sent close together
 * as one prompt (their texts joined, the turn keyed by the last one's UUID).
 * It appends pasted content after the typed text, and may wrap pastes in
 * `<pasted_content>` tags. So a prompt is matched, whitespace and those tags
 * aside, against the texts of one or more consecutive waiting messages; a
 * message passed over by a later match never reaches a prompt of its own,
 * and is forgotten, so that its UUID cannot key a later turn.
 */
export class PromptIds {
  private readonly pending: Array<{ uuid: string; text: string }> = [];

  /** Passes `messages` through, giving every message that starts a turn a UUID (its own, or a new one) and remembering it. */
  async *pass(messages: AsyncIterable<SDKUserMessage>): AsyncGenerator<SDKUserMessage> {
    for await (const message of messages) {
      if (!startsTurn(message)) {
        yield message;
        continue;
      }
      const uuid = message.uuid ?? randomUUID();
      this.pending.push({ uuid, text: promptTextOf(message) });
      if (this.pending.length > maxPending) this.pending.shift();
      yield { ...message, uuid };
    }
  }

  /** The message (or run of messages) this prompt came from, forgetting it and every message before it. */
  take(prompt: string): PromptMatch {
    const wanted = normalized(prompt);
    const last = this.lastMatchOf(wanted);
    if (last !== undefined) return { uuid: this.pending.splice(0, last + 1).at(-1)!.uuid, waiting: 0, usedUp: [] };
    const waiting = this.pending.length;
    return { uuid: undefined, waiting, usedUp: this.pending.splice(0, this.usedUpBy(wanted)).map((entry) => entry.uuid) };
  }

  /** Whether this prompt came from a waiting message (or run of messages); forgets nothing. */
  matches(prompt: string): boolean {
    return this.lastMatchOf(normalized(prompt)) !== undefined;
  }

  /** Where the run of consecutive waiting messages whose texts make up the prompt ends. */
  private lastMatchOf(wanted: string): number | undefined {
    for (let first = 0; first < this.pending.length; first += 1) {
      let joined = '';
      for (let last = first; last < this.pending.length; last += 1) {
        joined = [joined, this.pending[last]!.text].filter((text) => text !== '').join(' ');
        if (joined === wanted) return last;
        if (!wanted.startsWith(joined)) break;
      }
    }
    return undefined;
  }

  /** How many of the first waiting messages have their texts in the prompt, in order: the CLI submitted them, changed. */
  private usedUpBy(wanted: string): number {
    let position = 0;
    let count = 0;
    for (const { text } of this.pending) {
      const found = text === '' ? -1 : wanted.indexOf(text, position);
      if (found === -1) break;
      position = found + text.length;
      count += 1;
    }
    return count;
  }
}

/** Tool results, synthetic messages and messages queued without a query do not start a turn of their own. */
function startsTurn(message: SDKUserMessage): boolean {
  return message.parent_tool_use_id === null && message.isSynthetic !== true && message.shouldQuery !== false;
}

/** The text the CLI hands to UserPromptSubmit for a message: its text blocks, then the text of what was pasted. */
function promptTextOf(message: SDKUserMessage): string {
  const pasted = message.pasted_content ?? [];
  const pastedParts = pasted.reduce((count, entry) => count + 1 + (typeof entry === 'string' ? 0 : entry.length), 0);
  const contents = [message.message.content, ...(pastedParts > maxPastedParts ? [] : pasted)];
  return normalized(contents.flatMap(textsOf).join('\n'));
}

function textsOf(content: SDKUserMessage['message']['content']): string[] {
  if (typeof content === 'string') return [content];
  return content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
}

/** Text compared as the CLI keeps it: without paste tags, whitespace runs as one space. */
function normalized(text: string): string {
  return text
    .replace(/<\/?pasted_content\b[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
