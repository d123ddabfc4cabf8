/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS consumer, as Jest runs it by default */
/* global require */
// Run by test/package.test.ts with Jest's CommonJS runtime, from a project that installed the packed package.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { describe, it, expect, afterAll } = require('@jest/globals');
const { CheckpointManager } = require('rewindable');
const { memoryStorage } = require('rewindable/storage/memory');
const { runStorageConformance } = require('rewindable/testing');
const { trackTools } = require('rewindable/ai-sdk');

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-jest-cjs-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function openProject(name, options = {}) {
  const project = path.join(scratch, name);
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'notes.txt'), 'first draft\n');
  const manager = await CheckpointManager.open({ cwd: project, storeDir: path.join(scratch, `${name}-store`), ...options });
  return { project, manager };
}

describe('rewindable under CommonJS Jest', () => {
  it('rewinds a write made through a built-in tool', async () => {
    const { project, manager } = await openProject('tool');
    const checkpoint = randomUUID();
    await manager.checkpoint(checkpoint);
    await manager.tools.write({ file_path: 'notes.txt', content: 'rewritten\n' });
    await manager.rewindFiles(checkpoint);
    expect(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('first draft\n');
    await manager.close();
  });

  it('rewinds what a captured shell command did', async () => {
    const { project, manager } = await openProject('capture');
    const checkpoint = randomUUID();
    await manager.checkpoint(checkpoint);
    await manager.captureChanges(() => fs.writeFileSync(path.join(project, 'notes.txt'), 'formatted\n'));
    await manager.rewindFiles(checkpoint);
    expect(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('first draft\n');
    await manager.close();
  });

  it('rewinds a write made through an AI SDK tool wrapped by trackTools', async () => {
    const { project, manager } = await openProject('ai-sdk');
    const appendLine = { description: 'Append a line', inputSchema: {}, execute: async ({ file, line }) => fs.appendFileSync(path.join(project, file), `${line}\n`) };
    const tools = trackTools(manager, { appendLine }, { paths: { appendLine: ['file'] } });
    const checkpoint = randomUUID();
    await manager.checkpoint(checkpoint);
    await tools.appendLine.execute({ file: 'notes.txt', line: 'appended' }, { toolCallId: 'call-1', messages: [] });
    expect(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('first draft\nappended\n');
    await manager.rewindFiles(checkpoint);
    expect(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('first draft\n');
    await manager.close();
  });
});

runStorageConformance({ name: 'memory under CommonJS Jest', create: () => memoryStorage(), describe, it });
