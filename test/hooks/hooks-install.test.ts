import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { tempProject } from '../helpers/temp-project.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli?.remove());

/** A settings file as a user keeps it: other settings, and hooks of their own on the same events, indented with tabs. */
const existing = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard.sh', timeout: 5 }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
  },
};

const install = (root: string, ...more: string[]) => runCli(cli, ['hooks', 'install', 'claude-code', '--project', root, '--command', 'rewindable', ...more]);
const uninstall = (root: string, ...more: string[]) => runCli(cli, ['hooks', 'uninstall', 'claude-code', '--project', root, '--command', 'rewindable', ...more]);

describe('rewindable hooks install / uninstall claude-code', () => {
  it('merges our hooks beside the user\'s, keeps every other key and the indentation, and changes nothing on a second run', async () => {
    const project = tempProject();
    const settings = project.write('.claude/settings.json', `${JSON.stringify(existing, null, '\t')}\n`);
    const first = await install(project.root);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`Installed the rewindable hooks in ${settings}.\n`);
    const text = fs.readFileSync(settings, 'utf8');
    expect(text).toMatch(/^\{\n\t"model": "opus",\n/);
    expect(JSON.parse(text)).toEqual({
      model: 'opus',
      permissions: { allow: ['Bash(npm test:*)'] },
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard.sh', timeout: 5 }] },
          { matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash', hooks: [{ type: 'command', command: 'rewindable hook' }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }],
        UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'rewindable hook' }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'rewindable hook' }] }],
        PostToolUseFailure: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'rewindable hook' }] }],
      },
    });

    const second = await install(project.root);
    expect(second.stdout).toBe(`The rewindable hooks were already installed in ${settings}.\n`);
    expect(fs.readFileSync(settings, 'utf8')).toBe(text);

    const removed = await uninstall(project.root);
    expect(removed.stdout).toBe(`Removed the rewindable hooks from ${settings}.\n`);
    expect(JSON.parse(fs.readFileSync(settings, 'utf8'))).toEqual(existing);
    expect((await uninstall(project.root)).stdout).toBe(`No rewindable hooks to remove in ${settings}.\n`);
  });

  it('creates the settings file when there is none, and an uninstall leaves no empty hooks behind', async () => {
    const project = tempProject();
    expect((await install(project.root)).code).toBe(0);
    const settings = project.file('.claude/settings.json');
    expect(Object.keys(JSON.parse(fs.readFileSync(settings, 'utf8')).hooks)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure']);
    await uninstall(project.root);
    expect(JSON.parse(fs.readFileSync(settings, 'utf8'))).toEqual({});
  });

  it('replaces an install from another path in place, and takes out only ours when a group holds other hooks too', async () => {
    const project = tempProject();
    const settings = project.write(
      '.claude/settings.json',
      JSON.stringify({
        hooks: {
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'log-prompt.sh' }, { type: 'command', command: '/old/node_modules/rewindable/dist/cli.js hook' }] }, { hooks: [{ type: 'command', command: 'after.sh' }] }],
        },
      }),
    );
    await install(project.root);
    const installed = JSON.parse(fs.readFileSync(settings, 'utf8')) as { hooks: Record<string, unknown> };
    expect(installed.hooks.UserPromptSubmit).toEqual([
      { hooks: [{ type: 'command', command: 'rewindable hook' }] },
      { hooks: [{ type: 'command', command: 'log-prompt.sh' }] },
      { hooks: [{ type: 'command', command: 'after.sh' }] },
    ]);
    await uninstall(project.root);
    expect(JSON.parse(fs.readFileSync(settings, 'utf8'))).toEqual({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'log-prompt.sh' }] }, { hooks: [{ type: 'command', command: 'after.sh' }] }] } });
  });

  it("leaves alone other people's hooks that merely have rewindable and hook in their command", async () => {
    const project = tempProject();
    const theirs = {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-rewindable-wrapper hook' }] }],
      Stop: [{ hooks: [{ type: 'command', command: 'notrewindable hook --x' }] }],
    };
    const settings = project.write('.claude/settings.json', JSON.stringify({ hooks: theirs }));
    await install(project.root);
    const installed = JSON.parse(fs.readFileSync(settings, 'utf8')) as { hooks: Record<string, unknown[]> };
    expect(installed.hooks.PreToolUse).toEqual(expect.arrayContaining(theirs.PreToolUse));
    expect(installed.hooks.Stop).toEqual(theirs.Stop);
    await uninstall(project.root);
    expect(JSON.parse(fs.readFileSync(settings, 'utf8'))).toEqual({ hooks: theirs });
  });

  it('refuses a settings file that is not a JSON object, and leaves it as it was', async () => {
    const project = tempProject();
    const settings = project.write('.claude/settings.json', '{ "model": "opus", // a comment\n}');
    const run = await install(project.root);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/settings\.json was left as it is: it is not valid JSON/);
    expect(fs.readFileSync(settings, 'utf8')).toBe('{ "model": "opus", // a comment\n}');
  });

  it('writes through a settings file that is a symbolic link (dotfiles), keeping the link, on install and uninstall', async () => {
    const project = tempProject();
    const dotfiles = path.join(project.outside, 'dotfiles');
    fs.mkdirSync(dotfiles);
    const real = path.join(dotfiles, 'claude-settings.json');
    fs.writeFileSync(real, `${JSON.stringify(existing, null, 2)}\n`, { mode: 0o640 });
    fs.chmodSync(real, 0o640);
    fs.mkdirSync(project.file('.claude'));
    const settings = project.file('.claude/settings.json');
    fs.symlinkSync(path.relative(path.dirname(settings), real), settings);
    const link = fs.readlinkSync(settings);

    const installed = await install(project.root);

    expect(installed.code).toBe(0);
    expect(fs.lstatSync(settings).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(settings)).toBe(link);
    expect(JSON.parse(fs.readFileSync(real, 'utf8')).hooks.UserPromptSubmit).toEqual([{ hooks: [{ type: 'command', command: 'rewindable hook' }] }]);
    expect(fs.statSync(real).mode & 0o777).toBe(0o640);
    expect(fs.readdirSync(dotfiles)).toEqual(['claude-settings.json']);

    expect((await uninstall(project.root)).code).toBe(0);
    expect(fs.readlinkSync(settings)).toBe(link);
    expect(JSON.parse(fs.readFileSync(real, 'utf8'))).toEqual(existing);
  });

  it('refuses a settings link that dangles or leads to something other than a file, and leaves it as it was', async () => {
    const project = tempProject();
    fs.mkdirSync(project.file('.claude'));
    const settings = project.file('.claude/settings.json');
    const missing = path.join(project.outside, 'missing.json');
    fs.symlinkSync(missing, settings);

    const dangling = await install(project.root);

    expect(dangling.code).toBe(1);
    expect(dangling.stderr).toContain(`${settings} was left as it is: it is a symbolic link to ${missing}, which does not exist`);
    expect(fs.readlinkSync(settings)).toBe(missing);
    expect(fs.existsSync(missing)).toBe(false);

    const fifo = path.join(project.outside, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const target of [project.outside, fifo]) {
      fs.rmSync(settings);
      fs.symlinkSync(target, settings);
      for (const run of [await install(project.root), await uninstall(project.root)]) {
        expect(run.code, target).toBe(1);
        expect(run.stderr, target).toContain(`${settings} was left as it is: it is a symbolic link to ${target}, which is not a regular file`);
      }
      expect(fs.readlinkSync(settings)).toBe(target);
    }
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
  });

  it("keeps the fields a user added to our hook entry (a timeout) when installing again", async () => {
    const project = tempProject();
    const ours = { type: 'command', command: 'rewindable hook', timeout: 120, statusMessage: 'Backing up' };
    const old = { type: 'command', command: '/old/node_modules/rewindable/dist/cli.js hook', timeout: 30 };
    const settings = project.write(
      '.claude/settings.json',
      `${JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [ours] }], PreToolUse: [{ matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash', hooks: [old] }] } }, null, 2)}\n`,
    );

    const again = await install(project.root);

    expect(again.code).toBe(0);
    const hooks = (JSON.parse(fs.readFileSync(settings, 'utf8')) as { hooks: Record<string, Array<{ hooks: unknown[] }>> }).hooks;
    expect(hooks.UserPromptSubmit).toEqual([{ hooks: [ours] }]);
    expect(hooks.PreToolUse).toEqual([{ matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash', hooks: [{ type: 'command', command: 'rewindable hook', timeout: 30 }] }]);
    expect(hooks.PostToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: 'rewindable hook' }] }]);
  });

  it('--print prints the hooks; --scope user writes $CLAUDE_CONFIG_DIR/settings.json; the default command runs this rewindable', async () => {
    const project = tempProject();
    const printed = await runCli(cli, ['hooks', 'install', 'claude-code', '--print']);
    const hooks = (JSON.parse(printed.stdout) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> }).hooks;
    expect(hooks.UserPromptSubmit![0]!.hooks[0]!.command).toBe(`${process.execPath} ${cli.bin} hook`);
    const config = path.join(project.outside, 'config');
    const user = await runCli(cli, ['hooks', 'install', 'claude-code', '--scope', 'user'], { env: { CLAUDE_CONFIG_DIR: config } });
    expect(user.stdout).toBe(`Installed the rewindable hooks in ${path.join(config, 'settings.json')}.\n`);
    expect(fs.existsSync(project.file('.claude'))).toBe(false);
    const unknown = await runCli(cli, ['hooks', 'install', 'cursor']);
    expect(unknown.code).toBe(2);
  });
});
