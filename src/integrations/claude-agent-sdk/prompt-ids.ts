import { randomUUID } from 'node:crypto';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';

/** Prompts passed through `prompt()` whose turn has not started yet. Bounded: a message that never starts a turn must not pile up. */
const maxPending = 100;

/**
 * Remembers the UUIDs of the user messages a harness streams to `query()`,
 * so the UserPromptSubmit hook, which is given the prompt's text but not the
 * message's UUID, can key the checkpoint by that UUID: the id the harness,
 * the CLI's transcript and the SDK's own `rewindFiles()` all use.
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
      this.pending.push({ uuid, text: textOf(message) });
      if (this.pending.length > maxPending) this.pending.shift();
      yield { ...message, uuid };
    }
  }

  /** The UUID of the oldest pending message with this prompt text (the CLI submits them in order), forgetting it. */
  take(prompt: string): string | undefined {
    const index = this.pending.findIndex((entry) => entry.text === prompt.trim());
    if (index === -1) return undefined;
    return this.pending.splice(index, 1)[0]!.uuid;
  }
}

/** Tool results, synthetic messages and messages queued without a query do not start a turn of their own. */
function startsTurn(message: SDKUserMessage): boolean {
  return message.parent_tool_use_id === null && message.isSynthetic !== true && message.shouldQuery !== false;
}

/** The text the CLI hands to UserPromptSubmit: the message's text blocks, one per line. */
function textOf(message: SDKUserMessage): string {
  const { content } = message.message;
  if (typeof content === 'string') return content.trim();
  return content
    .flatMap((block) => (block.type === 'text' ? [block.text] : []))
    .join('\n')
    .trim();
}
