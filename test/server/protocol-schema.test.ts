import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolSchemaText, schemaPath } from '../../scripts/protocol-schema.js';
import { methods } from '../../src/server/methods.js';
import { newId, tempProject } from '../helpers/temp-project.js';
import { schemaErrors, type JsonSchema } from './helpers/json-schema.js';
import { buildServer, startServer, type BuiltServer, type ServerProcess } from './helpers/server-process.js';

/** docs/protocol.schema.json: up to date, and saying what the real server accepts. */

const committed = JSON.parse(fs.readFileSync(schemaPath, 'utf8')) as { $defs: Record<string, JsonSchema> };

describe('docs/protocol.schema.json', () => {
  it('is what scripts/protocol-schema.ts generates now (regenerate with: npm run protocol:schema)', () => {
    expect(fs.readFileSync(schemaPath, 'utf8')).toBe(protocolSchemaText());
  });

  it('has the params of every method, and of nothing else', () => {
    expect(Object.keys(committed.$defs)).toEqual(Object.keys(methods));
  });
});

describe('the schema agrees with the real server', () => {
  let built: BuiltServer;
  let server: ServerProcess;
  beforeAll(async () => {
    built = await buildServer();
    server = startServer(built);
  });
  afterAll(async () => {
    server.child.stdin.end();
    await server.exited;
    built.remove();
  });

  it('requests the schema accepts succeed; those it refuses get -32602', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const message = newId();
    const where = { cwd: project.root, store: project.store };
    let handle = '';
    // [method, params, valid by the schema?]; `H` stands for the handle of the session opened first.
    const requests: Array<[string, Record<string, unknown> | (() => Record<string, unknown>), boolean]> = [
      ['initialize', {}, true],
      ['initialize', { client: 'protocol-schema.test' }, true],
      ['initialize', { client: 3 }, false],
      ['open', { ...where, durability: 'fast' }, false],
      ['open', { ...where, session: 'latest' }, false],
      ['open', { ...where, session: { resume: 'not-a-uuid' } }, false],
      ['open', { ...where, capture: { include: 'src/**' } }, false],
      ['open', { ...where, extraRoots: ['/'] }, false],
      ['open', { ...where, durability: 'none', capture: { include: ['**'], gitignore: false } }, true],
      ['listSessions', where, true],
      ['listSessions', { cwd: '' }, false],
      ['checkpoint', () => ({ handle, userMessageId: message }), true],
      ['checkpoint', () => ({ handle, userMessageId: 'first' }), false],
      ['checkpoint', { handle: '' }, false],
      ['trackEdit', () => ({ handle, path: 'a.txt' }), true],
      ['trackEdit', () => ({ handle, path: ['a.txt'] }), false],
      ['trackEdit', () => ({ handle }), false],
      ['recordWrite', () => ({ handle, path: 'a.txt', tool: 'Write', toolCallId: 'call-1' }), true],
      ['recordWrite', () => ({ handle, path: 'a.txt', tool: null }), false],
      ['diffFiles', () => ({ handle, userMessageId: message, context: 0, binary: true, progressToken: 3 }), true],
      ['diffFiles', () => ({ handle, userMessageId: message, context: -1 }), false],
      ['diffFiles', () => ({ handle, userMessageId: message, context: 1.5 }), false],
      ['diffFiles', () => ({ handle, userMessageId: message, onProgress: true }), false],
      ['rewindFiles', () => ({ handle, userMessageId: message, dryRun: true, onConflict: 'merge', paths: ['a.txt'] }), true],
      ['rewindFiles', () => ({ handle, userMessageId: message, dryRun: true, hunks: 'a1b2' }), false],
      ['rewindFiles', () => ({ handle, userMessageId: message, dryRun: true, progressToken: true }), false],
      ['revertTurn', () => ({ handle, userMessageId: message, dryRun: true, onConflict: 'overwrite' }), true],
      ['revertTurn', () => ({ handle, userMessageId: message, dryRun: true, onConflict: 'merge' }), false],
      ['listCheckpoints', () => ({ handle }), true],
      ['listCheckpoints', () => ({ handle, all: true }), false],
      ['recordMessage', () => ({ handle, type: 'assistant', message: { text: 'ok' }, parentUuid: null }), true],
      ['recordMessage', () => ({ handle, type: '', message: 'ok' }), false],
      ['recordMessage', () => ({ handle, type: 'assistant' }), false],
      ['getTranscript', () => ({ handle }), true],
      ['listBranches', () => ({ handle }), true],
      ['rewind', () => ({ handle, userMessageId: message, scope: 'files', dryRun: true }), true],
      ['rewind', () => ({ handle, userMessageId: message, scope: 'all', dryRun: true }), false],
      ['scanBegin', () => ({ handle, label: 'ls' }), true],
      ['scanEnd', () => ({ handle, scanId: 7 }), false],
      ['close', () => ({ handle, force: true }), false],
      ['close', () => ({ handle }), true],
      ['shutdown', { now: true }, false],
    ];

    const outcomes: Array<{ method: string; params: unknown; valid: boolean; answer: unknown }> = [];
    for (const [method, given, labelled] of requests) {
      const params = typeof given === 'function' ? given() : given;
      const valid = schemaErrors(committed.$defs[method]!, params).length === 0;
      expect(valid, `${method} ${JSON.stringify(params)}: ${schemaErrors(committed.$defs[method]!, params).join('; ')}`).toBe(labelled);
      const answer = await server.request(method, params);
      if (method === 'open' && answer.result !== undefined) handle = (answer.result as { handle: string }).handle;
      outcomes.push({ method, params, valid, answer: answer.error !== undefined ? answer.error.code : 'result' });
    }

    expect(outcomes.filter((outcome) => outcome.valid).map((outcome) => [outcome.method, outcome.answer])).toEqual(
      outcomes.filter((outcome) => outcome.valid).map((outcome) => [outcome.method, 'result']),
    );
    expect(outcomes.filter((outcome) => !outcome.valid).map((outcome) => [outcome.method, outcome.answer])).toEqual(
      outcomes.filter((outcome) => !outcome.valid).map((outcome) => [outcome.method, -32602]),
    );
  });
});
