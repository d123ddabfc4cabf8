/**
 * Child process for the race test: swaps a tracked file and its parent
 * directory, in a tight loop, between a regular file, a symlink to a canary
 * outside the project, a directory, and nothing — while the test process
 * rewinds. It never writes through a path that might be a link: file
 * operations go to the real directory, wherever it currently is.
 *
 * Usage: node swapper.mjs '{"root": ..., "outside": ..., "stopFile": ..., "seed": n}'
 * Prints one JSON line with its counts when the stop file appears.
 */
import fs from 'node:fs';
import path from 'node:path';

interface SwapperConfig {
  root: string;
  outside: string;
  stopFile: string;
  seed: number;
}

const config = JSON.parse(process.argv[2]!) as SwapperConfig;
const directory = path.join(config.root, 'dir');
const aside = path.join(config.root, '.dir-aside');
const canaryFile = path.join(config.outside, 'canary.txt');
const canaryDirectory = path.join(config.outside, 'canaries');

// A small deterministic generator, so a failing run can be replayed from its seed.
let state = config.seed >>> 0 || 1;
const random = (limit: number) => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) % limit;
};

const kind = (target: string): 'file' | 'link' | 'directory' | 'absent' | 'other' => {
  try {
    const stat = fs.lstatSync(target);
    if (stat.isSymbolicLink()) return 'link';
    if (stat.isDirectory()) return 'directory';
    return stat.isFile() ? 'file' : 'other';
  } catch {
    return 'absent';
  }
};

/** Where the real directory is now (the library may also have recreated `dir`). */
const realDirectory = (): string | undefined => (kind(directory) === 'directory' ? directory : kind(aside) === 'directory' ? aside : undefined);

const remove = (target: string) => fs.rmSync(target, { recursive: true, force: true });
let sequence = 0;
const temporaryName = (inside: string) => path.join(inside, `.swap-${process.pid}-${(sequence += 1)}`);

/** Replaces `name` in the real directory by one of the states, atomically where the kinds allow it. */
function swapEntry(name: string): void {
  const real = realDirectory();
  if (real === undefined) return;
  const target = path.join(real, name);
  const staged = temporaryName(real);
  switch (random(5)) {
    case 0: // a regular file with new content
    case 1: // the original content with another mode: a rewind has only a chmod to do
      fs.writeFileSync(staged, random(2) === 0 ? `swapped ${sequence}\n` : 'original\n', { mode: random(2) === 0 ? 0o600 : 0o644 });
      if (kind(target) === 'directory') remove(target);
      fs.renameSync(staged, target);
      return;
    case 2: // a link to the canary outside the project
      fs.symlinkSync(random(2) === 0 ? canaryFile : path.join(canaryDirectory, name), staged);
      if (kind(target) === 'directory') remove(target);
      fs.renameSync(staged, target);
      return;
    case 3: // a directory
      remove(target);
      fs.mkdirSync(target);
      return;
    default:
      remove(target);
  }
}

/** Moves the real directory aside and puts a link to the canary directory, or a file, in its place; or moves it back. */
function swapDirectory(): void {
  const current = kind(directory);
  if (current === 'directory' && kind(aside) === 'absent') {
    fs.renameSync(directory, aside);
    const staged = temporaryName(config.root);
    if (random(2) === 0) fs.symlinkSync(canaryDirectory, staged);
    else fs.writeFileSync(staged, 'not a directory\n');
    fs.renameSync(staged, directory);
    return;
  }
  if (kind(aside) === 'directory') {
    if (current !== 'directory') remove(directory);
    // Fails if the library recreated a non-empty `dir` meanwhile; the next round tries again.
    fs.renameSync(aside, directory);
  }
}

let iterations = 0;
let errors = 0;
for (;;) {
  if (iterations % 200 === 0 && fs.existsSync(config.stopFile)) break;
  iterations += 1;
  try {
    const move = random(10);
    if (move < 3) swapDirectory();
    else swapEntry(move < 8 ? 'file.txt' : 'created.txt');
  } catch {
    errors += 1; // the rewinds move things too (they recreate `dir`, restore and delete files)
  }
}

// Leave the real layout in place, with the tracked files as regular files, so the test can make a last rewind.
for (let attempt = 0; attempt < 10 && kind(aside) === 'directory'; attempt += 1) {
  try {
    if (kind(directory) !== 'absent') remove(directory);
    fs.renameSync(aside, directory);
  } catch {
    // Retry.
  }
}
fs.mkdirSync(directory, { recursive: true });
for (const name of ['file.txt', 'created.txt']) {
  if (kind(path.join(directory, name)) !== 'file') {
    remove(path.join(directory, name));
    fs.writeFileSync(path.join(directory, name), `left by the swapper\n`);
  }
}
process.stdout.write(`${JSON.stringify({ iterations, errors })}\n`);
