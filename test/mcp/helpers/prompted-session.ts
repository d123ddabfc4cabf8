import fs from 'node:fs';
import { tempProject, type TempProject } from '../../helpers/temp-project.js';

export interface PromptedSession {
  project: TempProject;
  sessionId: string;
  /** Checkpoint of the first prompt, before the agent changed anything. */
  first: string;
  /** Checkpoint of the second prompt, after turn one. */
  second: string;
  /** The project's files before each turn, and at the end. */
  atFirst: Record<string, string>;
  atSecond: Record<string, string>;
  atEnd: Record<string, string>;
}

export const firstPrompt = 'Add a farewell function\nand make the greeting excited.';
export const secondPrompt = 'Remove the README and make run.sh executable';

/**
 * A closed session of two turns, recorded as a harness records it (each user
 * message with its prompt, then the tools' writes):
 * turn one edits src/greet.ts and creates src/farewell.ts;
 * turn two deletes README.md and makes run.sh executable.
 */
export async function promptedSession(): Promise<PromptedSession> {
  const project = tempProject();
  project.write('src/greet.ts', 'export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n');
  project.write('README.md', '# demo\n\nA project an agent works on.\n');
  project.write('run.sh', 'node src/greet.ts\n', 0o644);
  const atFirst = project.snapshot();
  const manager = await project.open();
  const first = (await manager.recordUserMessage({ role: 'user', content: firstPrompt })).uuid;
  await manager.trackEdit('src/greet.ts');
  project.write('src/greet.ts', 'export function greet(name: string) {\n  return `Hello, ${name}!`;\n}\n');
  await manager.trackEdit('src/farewell.ts');
  project.write('src/farewell.ts', 'export const farewell = (name: string) => `Bye, ${name}`;\n');
  const atSecond = project.snapshot();
  const second = (await manager.recordUserMessage({ role: 'user', content: [{ type: 'text', text: secondPrompt }] })).uuid;
  await manager.trackEdit('README.md');
  fs.rmSync(project.file('README.md'));
  await manager.trackEdit('run.sh');
  fs.chmodSync(project.file('run.sh'), 0o755);
  await manager.close();
  return { project, sessionId: manager.sessionId, first, second, atFirst, atSecond, atEnd: project.snapshot() };
}
