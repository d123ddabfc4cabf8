import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runningServers } from '../../src/hooks/server/running-servers.js';
import { generatedPath, generateProject } from '../lib/generated-project.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { measureSideBySide, median, sleep, type InProcessBenchmark } from '../lib/timing.js';
import { removeTree, treeBytes } from '../lib/workspace.js';

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
    const store = path.join(directory, 'store');
    const environment = { ...process.env, REWINDABLE_HOME: store, XDG_RUNTIME_DIR: runtime, NO_COLOR: '1' };
    // A session whose first scan waits for its first Bash hook, as before the server scanned after the first prompt.
    const withoutEarlyScan = { ...environment, REWINDABLE_HOOK_EARLY_SCAN: 'off' };
    const hook = (event: object, env: NodeJS.ProcessEnv = environment) => {
      const child = spawnSync(process.execPath, [bin, 'hook'], { cwd: project, env, input: JSON.stringify(event), encoding: 'utf8' });
      if (child.status !== 0 || child.stdout !== '') throw new Error(`rewindable hook exited with ${child.status}: ${child.stderr}${child.stdout}`);
    };
    const server = async () => {
      const { servers } = await runningServers(environment);
      const found = servers.find((candidate) => candidate.target.project === project);
      if (found === undefined) throw new Error('the project\'s hook server is not running');
      return found;
    };
    /** Waits until the server has run `count` sessions' early first scans in all. */
    const earlyScansDone = async (count: number) => {
      const deadline = Date.now() + 300_000;
      // A server in the middle of a scan may not answer a status request within its bound: it is asked again.
      const completed = async () => (await runningServers(environment)).servers.find((candidate) => candidate.target.project === project)?.earlyScans?.completed ?? 0;
      while ((await completed()) < count) {
        if (Date.now() > deadline) throw new Error(`the hook server did not finish ${count} early first scans`);
        await sleep(20);
      }
    };
    let earlyScans = 0;
    try {
      context.log(`hooks: generating ${files.toLocaleString('en-US')} files`);
      generateProject(project, files, averageFileBytes, 3);
      // Files of a real project are older than the racy window of a scan (see the capture scenario).
      await sleep(2_100);
      // The prompt and Edit rows: a session that has not scanned (its Edits back up files not tracked yet).
      const editing = new Agent(project, withoutEarlyScan);
      const shell = new Agent(project);
      // A session that stays in its first turn: every Bash hook timed for it follows its first prompt and first scan only.
      const firstTurn = new Agent(project);
      hook(editing.prompt('Start'), editing.env);

      // What a session's early first scan costs when the session never runs Bash: the server's CPU and the store's growth.
      context.log('hooks: the early first scan of two sessions that never run Bash');
      const earlyCosts: Array<{ cpuMs: number | undefined; storeBytes: number }> = [];
      for (const quiet of [new Agent(project), new Agent(project)]) {
        const { pid } = await server();
        const cpuBefore = cpuMsOf(pid);
        const storeBefore = treeBytes(store).diskBytes;
        hook(quiet.prompt('Only talk'));
        await earlyScansDone(++earlyScans);
        const cpuAfter = cpuMsOf(pid);
        earlyCosts.push({ cpuMs: cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined, storeBytes: treeBytes(store).diskBytes - storeBefore });
      }

      // The worst case: the Bash hook right after the prompt, waiting for the early scan it started.
      context.log('hooks: the first Bash hook of each shell session right after its first prompt (one sample each)');
      const firstScans: number[] = [];
      for (const agent of [shell, firstTurn]) {
        hook(agent.prompt('Start'));
        const started = performance.now();
        hook(agent.bash('before', 'first'));
        firstScans.push(performance.now() - started);
        hook(agent.bash('after', 'first'));
        earlyScans += 1;
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
      const prompt: InProcessBenchmark<object> = { samples, prepare: () => editing.prompt('Rename greet to welcome everywhere'), run: (event) => hook(event, editing.env) };
      // A different file each time: its first backup is the work (a file already tracked costs less).
      const edit: InProcessBenchmark<object> = { samples, prepare: () => editing.edit(generatedPath(1 + edited++)), run: (event) => hook(event, editing.env) };
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
      // The realistic case: a new session's first Bash hook once its prompt's early scan is done (the model's first reply takes seconds).
      const firstBashAfterScan: InProcessBenchmark<object> = {
        samples: context.quick ? 2 : 4,
        prepare: async () => {
          const agent = new Agent(project);
          hook(agent.prompt('Start'));
          await earlyScansDone(++earlyScans);
          fs.appendFileSync(path.join(project, generatedPath(3 + commands++)), '// changed before the first command\n');
          return agent.bash('before', 'first');
        },
        run: hook,
      };
      context.log(`hooks: ${samples} runs of node -e 0, prompt and Edit; ${scanSamples} of the Bash hooks`);
      const timings = await measureSideBySide({ node, prompt, edit, bashBefore, bashAfter, promptScanned, firstTurnBash, firstBashAfterScan } as Record<string, InProcessBenchmark<unknown>>, 2);
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
          label: `${at}: the session's first Bash hook, its prompt's scan done`,
          rewindable: figure('rewindable hook: a scan after the early first scan', 'firstBashAfterScan'),
          baseline,
          target,
        },
        {
          label: `${at}: the session's first Bash hook, right after its prompt`,
          rewindable: { name: 'rewindable hook: waits for the early first scan, every file backed up', value: median(firstScans), unit: 'ms' as const, samples: firstScans.length },
          baseline,
          note: 'the worst case, once per session: the first scan, started by the prompt, is still running',
        },
        {
          label: `${at}: UserPromptSubmit, after the first scan`,
          rewindable: figure('rewindable hook: a checkpoint with a scan', 'promptScanned'),
          baseline,
          // Every prompt after a session's first, by default: the session scanned after its first one.
          target,
        },
        ...earlyCosts.flatMap(({ cpuMs, storeBytes }, index): Row[] => {
          const which = index === 0 ? 'the project\'s first session' : 'a second session of the project';
          const note = 'the early first scan of a session that never runs Bash, in the hook server, after its prompt is answered';
          return [
            ...(cpuMs !== undefined ? [{ label: `${at}: early first scan, ${which}: CPU`, rewindable: { name: 'the hook server\'s CPU time', value: cpuMs, unit: 'ms' as const }, note }] : []),
            { label: `${at}: early first scan, ${which}: store`, rewindable: { name: 'what the store grew by (disk)', value: storeBytes, unit: 'bytes' as const }, note },
          ];
        }),
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
            '"PreToolUse Bash, first turn" is a third session that never leaves its first turn (one file appended to before each sample).',
          'The server runs a session\'s first scan (every file backed up, its journal started) in the background after the session\'s first prompt is answered ' +
            '(`REWINDABLE_HOOK_EARLY_SCAN=off` leaves it to the first Bash hook; the prompt and Edit rows use that, so that each Edit backs up a file not tracked yet). ' +
            '"Its prompt\'s scan done": a new session each sample, its prompt and the wait for its early scan untimed, one file appended to, then its first PreToolUse Bash. ' +
            '"Right after its prompt": the first PreToolUse Bash of the two shell sessions sent as soon as their prompt is answered, once each. ' +
            'The early scan\'s cost: two sessions that only send a prompt, the hook server\'s CPU time (/proc/PID/schedstat) and the growth of the store (allocated blocks) from the prompt to the scan\'s end.',
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

  /** `env`: the environment of the session's hooks. */
  constructor(
    private readonly project: string,
    readonly env?: NodeJS.ProcessEnv,
  ) {}

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

/** A process's time on a CPU so far, in milliseconds (Linux); undefined elsewhere. */
function cpuMsOf(pid: number): number | undefined {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}
