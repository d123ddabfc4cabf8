import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BuiltCli } from '../../cli/helpers/built-cli.js';

export interface McpConnection {
  client: Client;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  /** The server's process id. */
  pid: number;
  close(): Promise<void>;
}

/**
 * Spawns `node cli.js mcp --cwd <project> --store <store>` through the SDK's
 * own stdio transport and connects the SDK's Client to it, as an agent's
 * harness does. HOME is the built CLI's empty one.
 */
export async function connectMcp(cli: BuiltCli, options: { cwd: string; store: string }): Promise<McpConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli.bin, 'mcp', '--cwd', options.cwd, '--store', options.store],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cli.home },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'rewindable-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, pid: transport.pid!, close: () => client.close() };
}

/** The text of a tool result's one text block. */
export function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The error a failed tool call reports for programs (see src/mcp/tool-result.ts). */
export function errorOf(result: CallToolResult): { code: string; message: string; details?: Record<string, unknown> } | undefined {
  if (result.isError !== true) return undefined;
  return result._meta?.['rewindable/error'] as { code: string; message: string } | undefined;
}
