import net from 'node:net';

/** PostgreSQL's CommandComplete message for COMMIT: 'C', length 11, "COMMIT\0". */
const commitComplete = Buffer.concat([Buffer.from([0x43, 0, 0, 0, 11]), Buffer.from('COMMIT\0')]);

export interface LossyProxy {
  readonly port: number;
  /** The next COMMIT reaches the server and is applied, but the connection drops before its acknowledgement gets back. */
  dropNextCommitAcknowledgement(): void;
  readonly droppedAcknowledgements: number;
  /** Connections the proxy has accepted and passed on to the server. */
  readonly connections: number;
  /** The network goes down: every connection through the proxy drops, and new ones are cut at once until `restore()`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/** A TCP proxy in front of a PostgreSQL server that can lose a transaction's acknowledgement on the way back, or every connection. */
export async function startLossyProxy(targetPort: number): Promise<LossyProxy> {
  let armed = false;
  let dropped = 0;
  let down = false;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (down) {
      client.on('error', () => {});
      client.destroy();
      return;
    }
    connections += 1;
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(commitComplete)) {
        armed = false;
        dropped += 1;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    dropNextCommitAcknowledgement() {
      armed = true;
    },
    get droppedAcknowledgements() {
      return dropped;
    },
    get connections() {
      return connections;
    },
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      down = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
