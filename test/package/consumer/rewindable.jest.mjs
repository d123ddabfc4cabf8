// Run by test/package.test.ts with Jest's ESM runtime (node --experimental-vm-modules), from a project that installed the packed package.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, it, expect, afterAll } from '@jest/globals';
import { CheckpointManager } from 'rewindable';
import { memoryStorage } from 'rewindable/storage/memory';
import { runStorageConformance } from 'rewindable/testing';
import { trackTools } from 'rewindable/ai-sdk';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-jest-esm-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function openProject(name, options = {}) {
  const project = path.join(scratch, name);
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'notes.txt'), 'first draft\n');
  const manager = await CheckpointManager.open({ cwd: project, storeDir: path.join(scratch, `${name}-store`), ...options });
  return { project, manager };
}

describe('rewindable under ESM Jest', () => {
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

runStorageConformance({ name: 'memory under ESM Jest', create: () => memoryStorage(), describe, it });
