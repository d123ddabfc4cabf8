import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';

export interface ClaudeEnvironment {
  /** The whole environment of the CLI process (the SDK's `env` replaces `process.env`). */
  env: Record<string, string>;
  /** The CLI's config directory (transcripts, settings). */
  configDirectory: string;
  remove(): void;
}

/**
 * An environment that keeps the Claude Code CLI away from the machine's own
 * setup and from the network: its home, config and temporary directories in
 * a fresh temp directory, the API at `apiUrl` with a dummy key, telemetry,
 * updates and other non-essential traffic off.
 */
export function claudeEnvironment(apiUrl: string): ClaudeEnvironment {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-claude-')));
  const home = path.join(base, 'home');
  const configDirectory = path.join(base, 'config');
  const temporary = path.join(base, 'tmp');
  for (const directory of [home, configDirectory, temporary]) fs.mkdirSync(directory);
  return {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      CLAUDE_CONFIG_DIR: configDirectory,
      TMPDIR: temporary,
      CLAUDE_CODE_TMPDIR: temporary,
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
    configDirectory,
    remove: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

/**
 * The Claude Code binary the Agent SDK runs, from its platform package (an
 * optional dependency: npm installs only the one for this platform and C
 * library, and none for a platform Anthropic does not build for). Tests that
 * need Claude Code run only where it is.
 */
export function bundledClaudeCode(): string | undefined {
  const require = createRequire(import.meta.url);
  const libc = process.platform === 'linux' && fs.existsSync('/etc/alpine-release') ? '-musl' : '';
  try {
    const manifest = require.resolve(`@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}${libc}/package.json`);
    const binary = path.join(path.dirname(manifest), process.platform === 'win32' ? 'claude.exe' : 'claude');
    return fs.existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/** A prompt stream a test feeds one message at a time, between turns; `undefined` ends it. */
export function promptStream() {
  const queued: Array<SDKUserMessage | undefined> = [];
  let wake: (() => void) | undefined;
  return {
    push(message: SDKUserMessage | undefined) {
      queued.push(message);
      wake?.();
    },
    async *messages(): AsyncGenerator<SDKUserMessage> {
      for (;;) {
        while (queued.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        const message = queued.shift();
        if (message === undefined) return;
        yield message;
      }
    },
  };
}
