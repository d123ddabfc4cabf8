import { Connection } from '../../server/server.js';
import { flagValue, type Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';

export const serveCommand: Command = {
  name: 'serve',
  description:
    'Serves the library over stdin and stdout, for programs in other languages (the Python client): JSON-RPC 2.0, one ' +
    'message per line. Each request opens, drives or closes a session (checkpoint, trackEdit, rewindFiles, diffFiles ...); ' +
    'stdout carries protocol messages only, logs go to stderr. The protocol is described in docs/protocol.md.\n\n' +
    'A shutdown request, the end of stdin, SIGTERM or SIGINT lets the requests already read finish (a rewind is never ' +
    'cut short), closes every session, releasing its lock, and exits 0. A second signal exits at once; the next ' +
    'process to open the project rolls an unfinished rewind back.',
  positionals: { required: [] },
  options: {
    stdio: { type: 'boolean', description: 'Talk JSON-RPC over stdin and stdout (the one transport; required).' },
  },
  examples: ['rewindable serve --stdio', 'rewindable serve --stdio --store /tmp/agent-store'],
  async run(invocation) {
    if (!flagValue(invocation, 'stdio')) throw new UsageError('serve needs --stdio: stdin and stdout are its one transport.');
    const { terminal } = invocation;
    const connection = new Connection({
      input: terminal.stdin,
      output: terminal.stdout,
      log: (line) => terminal.stderr.write(`${line}\n`),
      defaultStore: invocation.storeDir,
    });
    const signals = ['SIGTERM', 'SIGINT'] as const;
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
      signalled = true;
      void connection.stop();
    };
    for (const signal of signals) process.on(signal, onSignal);
    try {
      return (await connection.finished) === 0 ? ExitCode.success : ExitCode.failure;
    } finally {
      for (const signal of signals) process.off(signal, onSignal);
    }
  },
};
