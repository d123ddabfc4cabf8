import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedPath, generateProject } from '../lib/generated-project.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { measureSideBySide, median, sleep, type InProcessBenchmark } from '../lib/timing.js';
import { removeTree } from '../lib/workspace.js';

/** The bin as the package ships it, built with the project's tsup configuration (chunks split) by `npm run bench`. */
const bin = fileURLToPath(new URL('../../.bench-work/dist/cli.js', import.meta.url));

const projectFiles = 20_000;
const averageFileBytes = 4_000;

/** The target of the brief: a hook call costs at most 1.5× a bare Node start, side by side. */
const target = { kind: 'ratio-at-most', value: 1.5 } as const;

/**
 * What one Claude Code hook call costs: `rewindable hook` with a real hook
 * event on stdin, a new Node process each time as Claude Code starts it,
 * against `node -e 0` given the same stdin: UserPromptSubmit (a checkpoint
 * with its prompt), PreToolUse of Edit (the first backup of a file) and
 * PreToolUse / PostToolUse of Bash (a scan of the project) in a project of
 * 20,000 files.
 */
export const hookCost: Scenario = {
  id: 'hooks',
  summary: 'rewindable hook (Claude Code hooks: prompt, Edit, Bash before/after) at 20,000 files, each a new process, vs node -e 0',
  async run(context) {
    if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run the benchmarks with npm run bench, which builds the package first.`);
    const files = context.quick ? 2_000 : projectFiles;
    const samples = context.quick ? 4 : 20;
    const scanSamples = context.quick ? 2 : 8;
    const directory = context.workspace.directory('hooks');
    const project = context.workspace.directory('hooks', 'project');
    // The resident hook servers' sockets in the workspace: the run's servers are its own, and stopped at its end.
    const runtime = context.workspace.directory('hooks', 'run');
    fs.chmodSync(runtime, 0o700);
    const environment = { ...process.env, REWINDABLE_HOME: path.join(directory, 'store'), XDG_RUNTIME_DIR: runtime, NO_COLOR: '1' };
    const hook = (event: object) => {
      const child = spawnSync(process.execPath, [bin, 'hook'], { cwd: project, env: environment, input: JSON.stringify(event), encoding: 'utf8' });
      if (child.status !== 0 || child.stdout !== '') throw new Error(`rewindable hook exited with ${child.status}: ${child.stderr}${child.stdout}`);
    };
    try {
      context.log(`hooks: generating ${files.toLocaleString('en-US')} files`);
      generateProject(project, files, averageFileBytes, 3);
      // Files of a real project are older than the racy window of a scan (see the capture scenario).
      await sleep(2_100);
      const editing = new Agent(project);
      const shell = new Agent(project);
      // A session that stays in its first turn: every Bash hook timed for it follows its first prompt and first scan only.
      const firstTurn = new Agent(project);
      hook(editing.prompt('Start'));
      hook(shell.prompt('Start'));
      hook(firstTurn.prompt('Start'));
      context.log('hooks: the first scan of the project in each shell session (one sample each)');
      const firstScans: number[] = [];
      for (const agent of [shell, firstTurn]) {
        const started = performance.now();
        hook(agent.bash('before', 'first'));
        firstScans.push(performance.now() - started);
        hook(agent.bash('after', 'first'));
      }
      let edited = 0;
      let commands = 0;
      const node: InProcessBenchmark<string> = {
        samples,
        prepare: () => JSON.stringify(editing.edit(generatedPath(0))),
        run: (input) => {
          const child = spawnSync(process.execPath, ['-e', '0'], { cwd: project, env: environment, input });
          if (child.status !== 0) throw new Error(`node -e 0 exited with ${child.status}`);
        },
      };
      const prompt: InProcessBenchmark<object> = { samples, prepare: () => editing.prompt('Rename greet to welcome everywhere'), run: hook };
      // A different file each time: its first backup is the work (a file already tracked costs less).
      const edit: InProcessBenchmark<object> = { samples, prepare: () => editing.edit(generatedPath(1 + edited++)), run: hook };
      const bashBefore: InProcessBenchmark<object> = { samples: scanSamples, prepare: () => shell.bash('before', `b${commands++}`), run: hook };
      const bashAfter: InProcessBenchmark<object> = {
        samples: scanSamples,
        prepare: () => {
          const id = `a${commands++}`;
          hook(shell.bash('before', id));
          fs.appendFileSync(path.join(project, generatedPath(files - 1 - commands)), '// changed by the command\n');
          fs.writeFileSync(path.join(project, `generated-${commands}.txt`), 'made by the command\n');
          return shell.bash('after', id);
        },
        run: hook,
      };
      const promptScanned: InProcessBenchmark<object> = { samples: scanSamples, prepare: () => shell.prompt('Next turn'), run: hook };
      const firstTurnBash: InProcessBenchmark<object> = {
        samples: scanSamples,
        prepare: () => {
          const id = `f${commands++}`;
          fs.appendFileSync(path.join(project, generatedPath(2 + commands)), '// changed in the first turn\n');
          return firstTurn.bash('before', id);
        },
        run: hook,
      };
      context.log(`hooks: ${samples} runs of node -e 0, prompt and Edit; ${scanSamples} of the Bash hooks`);
      const timings = await measureSideBySide({ node, prompt, edit, bashBefore, bashAfter, promptScanned, firstTurnBash } as Record<string, InProcessBenchmark<unknown>>, 2);
      const baseline = { name: 'node -e 0', value: timings.node!.medianMs, unit: 'ms' as const, samples: timings.node!.samples };
      const figure = (name: string, key: string) => ({ name, value: timings[key]!.medianMs, unit: 'ms' as const, samples: timings[key]!.samples });
      const at = `${files.toLocaleString('en-US')} files`;
      const rows: Row[] = [
        { label: `${at}: UserPromptSubmit`, rewindable: figure('rewindable hook: a checkpoint with the prompt', 'prompt'), baseline, target },
        { label: `${at}: PreToolUse Edit`, rewindable: figure('rewindable hook: the first backup of a file', 'edit'), baseline, target },
        { label: `${at}: PreToolUse Bash`, rewindable: figure('rewindable hook: a scan of the project', 'bashBefore'), baseline, target },
        { label: `${at}: PostToolUse Bash`, rewindable: figure('rewindable hook: a scan and the command\'s record', 'bashAfter'), baseline, target },
        { label: `${at}: PreToolUse Bash, first turn`, rewindable: figure('rewindable hook: a scan in the session\'s first turn', 'firstTurnBash'), baseline, target },
        {
          label: `${at}: the session's first Bash hook`,
          rewindable: { name: 'rewindable hook: the first scan, every file backed up', value: median(firstScans), unit: 'ms' as const, samples: firstScans.length },
          baseline,
          note: 'once per session: every file of the project is read and backed up',
        },
        {
          label: `${at}: UserPromptSubmit, after Bash`,
          rewindable: figure('rewindable hook: a checkpoint with a scan', 'promptScanned'),
          baseline,
          note: 'once a session has scanned for a shell command, every checkpoint scans too',
        },
      ];
      const report: ScenarioReport = {
        id: 'hooks',
        title: 'Claude Code hooks: one hook call',
        method: [
          `A project of ${at} (${averageFileBytes.toLocaleString('en-US')} bytes on average). Each sample starts \`node .bench-work/dist/cli.js hook\` with \`spawnSync\`, ` +
            'a Claude Code hook event as JSON on stdin, as Claude Code runs a command hook, and waits for it to end; the baseline is `node -e 0` given the same stdin.',
          'UserPromptSubmit: a new checkpoint with its prompt, in a session that has not scanned the project. PreToolUse Edit: the first backup of a file not ' +
            'tracked yet (a new file each sample), durability \'full\'. PreToolUse / PostToolUse Bash: a second session, whose first scan (the whole project ' +
            'backed up) is reported on its own row; each PostToolUse sample follows an untimed PreToolUse and a command that changes one file and creates one.',
          `${samples} samples of node, the prompt and the Edit, ${scanSamples} of each Bash hook, in two blocks alternating between contenders.`,
          'Each hook is the thin client of the project\'s resident hook server (docs/hooks.md), started by the first, untimed, hook call. ' +
            'The server\'s file-watcher journal starts with a session\'s first scan, so no turn is untimed after it: the Bash rows include the first turn\'s hooks. ' +
            '"PreToolUse Bash, first turn" is a third session that never leaves its first turn (one file appended to before each sample); ' +
            '"the session\'s first Bash hook" is the first scan of the two shell sessions, once each (in the first, the server also starts).',
        ],
        rows,
      };
      return [report];
    } finally {
      spawnSync(process.execPath, [bin, 'hooks', 'stop', '--all'], { env: environment, stdio: 'ignore' });
      removeTree(directory);
    }
  },
};

/** One Claude Code session's hook events. */
class Agent {
  private readonly sessionId = randomUUID();

  constructor(private readonly project: string) {}

  private base(eventName: string) {
    return { session_id: this.sessionId, transcript_path: `/tmp/${this.sessionId}.jsonl`, cwd: this.project, permission_mode: 'default', hook_event_name: eventName };
  }

  prompt(text: string): object {
    return { ...this.base('UserPromptSubmit'), prompt: text, prompt_id: randomUUID() };
  }

  edit(relative: string): object {
    return { ...this.base('PreToolUse'), tool_name: 'Edit', tool_input: { file_path: path.join(this.project, relative), old_string: 'a', new_string: 'b' }, tool_use_id: `toolu_${randomUUID()}` };
  }

  bash(phase: 'before' | 'after', id: string): object {
    const command = { command: 'npm run codemod' };
    if (phase === 'before') return { ...this.base('PreToolUse'), tool_name: 'Bash', tool_input: command, tool_use_id: `toolu_${id}` };
    return { ...this.base('PostToolUse'), tool_name: 'Bash', tool_input: command, tool_response: { stdout: '', stderr: '' }, tool_use_id: `toolu_${id}` };
  }
}
