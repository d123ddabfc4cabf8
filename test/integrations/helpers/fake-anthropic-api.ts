import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A content block the scripted model answers with. */
export type ScriptedBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** The parts of a Messages API request the script reads. */
export interface MessagesRequest {
  model: string;
  stream?: boolean;
  tools?: Array<{ name: string }>;
  messages: Array<{ role: string; content: string | Array<{ type: string; text?: string; tool_use_id?: string }> }>;
}

/** Decides the model's answer to one request (a promise holds the answer back until it settles). */
export type ModelScript = (request: MessagesRequest) => ScriptedBlock[] | Promise<ScriptedBlock[]>;

export interface FakeAnthropicApi {
  /** Base URL for ANTHROPIC_BASE_URL. */
  url: string;
  /** Every Messages API request received, in order. */
  requests: MessagesRequest[];
  /** Requests to any other route (answered with an empty JSON object), as "METHOD /path". */
  otherRoutes: string[];
  close(): Promise<void>;
}

/**
 * A small stand-in for the Anthropic Messages API on 127.0.0.1: POST
 * /v1/messages answers with the script's blocks, streamed as server-sent
 * events in the order the real API sends them (message_start, then each
 * block's start/delta/stop, message_delta with the stop reason,
 * message_stop), or as one JSON body when the request does not stream.
 * Token counting answers a fixed count; any other route gets `{}` and is
 * recorded, so a test can show what else the client asked for.
 */
export async function startFakeAnthropicApi(script: ModelScript): Promise<FakeAnthropicApi> {
  const requests: MessagesRequest[] = [];
  const otherRoutes: string[] = [];
  let messageCount = 0;
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', async () => {
      const route = new URL(incoming.url ?? '/', 'http://127.0.0.1').pathname;
      if (incoming.method === 'POST' && route === '/v1/messages/count_tokens') {
        return sendJson(response, { input_tokens: 100 });
      }
      if (incoming.method !== 'POST' || route !== '/v1/messages') {
        otherRoutes.push(`${incoming.method} ${route}`);
        return sendJson(response, {});
      }
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesRequest;
      requests.push(request);
      let blocks: ScriptedBlock[];
      try {
        blocks = await script(request);
      } catch (error) {
        return sendJson(response, { type: 'error', error: { type: 'invalid_request_error', message: String(error) } }, 400);
      }
      const message = {
        id: `msg_fake_${++messageCount}`,
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: [] as ScriptedBlock[],
        stop_reason: null as string | null,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      };
      const stopReason = blocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
      if (request.stream !== true) return sendJson(response, { ...message, content: blocks, stop_reason: stopReason, usage: { input_tokens: 100, output_tokens: 20 } });
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (event: string, data: object) => response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
      send('message_start', { message });
      blocks.forEach((block, index) => {
        if (block.type === 'text') {
          send('content_block_start', { index, content_block: { type: 'text', text: '' } });
          send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
        } else {
          send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
          send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
        }
        send('content_block_stop', { index });
      });
      send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
      send('message_stop', {});
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    otherRoutes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendJson(response: http.ServerResponse, body: object, status = 200): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/**
 * A script that plays one list of answers per user prompt: the prompt is
 * the latest user message (not a tool result) that contains one of the
 * markers, and the answer is picked by how many assistant messages followed
 * it. Requests without tools (titles, summaries) get a short text.
 */
export function scriptByPrompt(turns: Record<string, ScriptedBlock[][]>): ModelScript {
  const markers = Object.keys(turns);
  return (request) => {
    if (request.tools === undefined || request.tools.length === 0) return [{ type: 'text', text: 'ok' }];
    const promptIndex = request.messages.findLastIndex(
      (message) => message.role === 'user' && !isToolResult(message.content) && markers.some((marker) => textOf(message.content).includes(marker)),
    );
    if (promptIndex === -1) throw new Error(`No scripted turn for a conversation of ${request.messages.length} messages`);
    const marker = markers.find((key) => textOf(request.messages[promptIndex]!.content).includes(key))!;
    const step = request.messages.slice(promptIndex + 1).filter((message) => message.role === 'assistant').length;
    return turns[marker]![step] ?? [{ type: 'text', text: 'Done.' }];
  };
}

function isToolResult(content: MessagesRequest['messages'][number]['content']): boolean {
  return Array.isArray(content) && content.some((block) => block.type === 'tool_result');
}

function textOf(content: MessagesRequest['messages'][number]['content']): string {
  return typeof content === 'string' ? content : content.map((block) => block.text ?? '').join('\n');
}
