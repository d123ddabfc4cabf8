import net from 'node:net';
import type { ServerReply, ServerRequest } from './server-address.js';

/** How a request to a server ended without a reply. */
export type NoReply = 'no-server' | 'closed' | 'timeout';

export class ServerNoReply extends Error {
  override readonly name = 'ServerNoReply';
  constructor(
    readonly reason: NoReply,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends one request (a line of JSON) and reads the one reply line. Rejects
 * with `no-server` when nothing listens on the socket, `closed` when the
 * connection ended before a whole reply (the server died mid-event), and
 * `timeout` after `timeoutMs`.
 */
export function requestServer(socketPath: string, request: ServerRequest, timeoutMs: number): Promise<ServerReply> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    const chunks: Buffer[] = [];
    let connected = false;
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      outcome();
    };
    const timer = setTimeout(() => finish(() => reject(new ServerNoReply('timeout', `no reply from ${socketPath} within ${timeoutMs} ms`))), timeoutMs);
    socket.on('connect', () => {
      connected = true;
      socket.end(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (!chunk.includes(0x0a)) return;
      const text = Buffer.concat(chunks).toString('utf8');
      const line = text.slice(0, text.indexOf('\n'));
      try {
        const reply = JSON.parse(line) as ServerReply;
        finish(() => resolve(reply));
      } catch (error) {
        finish(() => reject(new ServerNoReply('closed', `an unreadable reply from ${socketPath}: ${(error as Error).message}`)));
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const reason: NoReply = !connected && (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') ? 'no-server' : 'closed';
      finish(() => reject(new ServerNoReply(reason, `${socketPath}: ${error.message}`)));
    });
    socket.on('close', () => finish(() => reject(new ServerNoReply('closed', `${socketPath} closed the connection before replying`))));
  });
}
