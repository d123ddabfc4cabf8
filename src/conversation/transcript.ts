import { UuidMap, uuidKey } from '../paths.js';
import type { MessageRecord } from '../schemas.js';

/** A message of the conversation as the manager keeps it. */
export interface TranscriptMessage {
  uuid: string;
  /** The message it answers or follows; `null` for the first message of a conversation. */
  parentUuid: string | null;
  /** The message's own type: `user`, `assistant`, `system`, `tool` or the harness's own. */
  type: string;
  timestamp: string;
  /** The harness's payload, exactly as handed over. */
  message: unknown;
}

/**
 * The conversation as a tree: every message links to its parent, and the
 * active leaf says which branch the harness shows. Rewinding the conversation
 * moves the leaf; nothing is ever removed, so old branches stay readable.
 */
export class Transcript {
  /** Ids are kept in lowercase and found whatever their case (see `canonicalUuid`). */
  private readonly messages = new UuidMap<TranscriptMessage>();
  private readonly children = new Map<string | null, string[]>();
  /** Append order, for listing branches oldest first. */
  private readonly order: string[] = [];
  /** The end of the active branch; `null` before the first message (or after rewinding to the start). */
  get leaf(): string | null {
    return this.activeLeaf;
  }

  private activeLeaf: string | null = null;

  get size(): number {
    return this.messages.size;
  }

  get(uuid: string): TranscriptMessage | undefined {
    return this.messages.get(uuid);
  }

  has(uuid: string): boolean {
    return this.messages.has(uuid);
  }

  add(record: MessageRecord): void {
    if (this.messages.has(record.uuid)) return;
    const uuid = uuidKey(record.uuid);
    const parentUuid = record.parentUuid === null ? null : uuidKey(record.parentUuid);
    const message: TranscriptMessage = { uuid, parentUuid, type: record.role, timestamp: record.timestamp, message: record.message };
    this.messages.set(uuid, message);
    this.order.push(uuid);
    const siblings = this.children.get(parentUuid) ?? [];
    siblings.push(uuid);
    this.children.set(parentUuid, siblings);
    this.activeLeaf = uuid;
  }

  /** A conversation rewind: the active branch now ends at `leaf`. */
  moveLeaf(leaf: string | null): void {
    this.activeLeaf = leaf === null ? null : uuidKey(leaf);
  }

  /** Messages from the root to `leaf` (default: the active leaf), following parent links. */
  chain(leaf: string | null = this.leaf): TranscriptMessage[] {
    const chain: TranscriptMessage[] = [];
    const seen = new Set<string>();
    for (let uuid = leaf === null ? null : uuidKey(leaf); uuid !== null && !seen.has(uuid); ) {
      seen.add(uuid);
      const message = this.messages.get(uuid);
      if (message === undefined) break;
      chain.push(message);
      uuid = message.parentUuid;
    }
    return chain.reverse();
  }

  /** The end of every branch (messages nothing follows), oldest first. */
  leaves(): string[] {
    return this.order.filter((uuid) => (this.children.get(uuid) ?? []).length === 0);
  }

  /** The first message of the given type on the active branch, or anywhere. */
  first(type: string): TranscriptMessage | undefined {
    return this.chain().find((message) => message.type === type) ?? this.order.map((uuid) => this.messages.get(uuid)!).find((message) => message.type === type);
  }
}

/** A short text for a message payload: a string, or the text of `{ content }` in the common chat shapes. */
export function messageText(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  if (typeof payload !== 'object' || payload === null) return undefined;
  const record = payload as Record<string, unknown>;
  if ('message' in record && typeof record.message === 'object') return messageText(record.message);
  const content = record.content ?? record.text;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    for (const part of content) {
      const text = typeof part === 'string' ? part : (part as { text?: unknown } | null)?.text;
      if (typeof text === 'string') return text;
    }
  }
  return undefined;
}
