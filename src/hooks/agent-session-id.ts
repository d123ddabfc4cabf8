import { createHash } from 'node:crypto';

/** The UUID namespace of agent session ids that are not UUIDs themselves (a fixed random UUID, never to change). */
const agentSessionNamespace = '4f6c1b1e-8a52-4d0f-9e43-2c7e5a1d9b60';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The rewindable session that records an agent's session: the agent's own
 * session id when it is a UUID (Claude Code's are), so `rewindable
 * checkpoints <the agent's session id>` finds it; otherwise the name-based
 * UUID (version 5, RFC 9562) of the id in a namespace of our own. The same
 * agent session always maps to the same rewindable session of its project.
 */
export function rewindableSessionIdOf(agentSessionId: string): string {
  if (uuidPattern.test(agentSessionId)) return agentSessionId.toLowerCase();
  const namespace = Buffer.from(agentSessionNamespace.replaceAll('-', ''), 'hex');
  const bytes = createHash('sha1').update(namespace).update(agentSessionId, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function isUuidText(text: string): boolean {
  return uuidPattern.test(text);
}
