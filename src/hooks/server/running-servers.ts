import fs from 'node:fs';
import { HookServerUnavailable, listSockets, socketDirectory, type ServerStatus } from './server-address.js';
import { requestServer } from './server-connection.js';

export interface RunningServer extends ServerStatus {
  socket: string;
}

/**
 * The hook servers running for this user, as they describe themselves. A
 * socket nobody listens on any more (its server was killed) is removed.
 * Empty, with the reason, when the socket directory cannot be used.
 */
export async function runningServers(env: NodeJS.ProcessEnv): Promise<{ servers: RunningServer[]; refused?: string }> {
  let directory: string;
  try {
    directory = socketDirectory(env);
  } catch (error) {
    if (error instanceof HookServerUnavailable) return { servers: [], refused: error.message };
    throw error;
  }
  const servers: RunningServer[] = [];
  for (const socket of listSockets(directory)) {
    try {
      const reply = await requestServer(socket, { type: 'status' }, 2000);
      if (reply.type === 'status') servers.push({ ...reply, socket });
    } catch (error) {
      if ((error as { reason?: string }).reason === 'no-server') fs.rmSync(socket, { force: true });
    }
  }
  return { servers };
}

/** Tells a server to stop, and waits (up to `waitMs`) until its process has exited. */
export async function stopServer(server: RunningServer, waitMs = 10_000): Promise<boolean> {
  try {
    await requestServer(server.socket, { type: 'stop' }, 2000);
  } catch {
    // Gone already.
  }
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (!isAlive(server.pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !isAlive(server.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
