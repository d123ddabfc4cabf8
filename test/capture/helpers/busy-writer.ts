// Changes a project (writes, creates, deletes, renames, new directories) until its stdin closes: a shell command
// still running while a checkpoint scans the project. At most `maxSteps` changes, so the events stay well below the
// journal's overflow bound (8,192 by default) however slow the scan.
import fs from 'node:fs';
import path from 'node:path';

const [root, directoryCount] = [process.argv[2]!, Number(process.argv[3])];
const maxSteps = 2500;
let step = 0;

function change(): void {
  const directory = path.join(root, `d${step % directoryCount}`);
  const kind = step % 5;
  try {
    if (kind === 0) fs.writeFileSync(path.join(directory, `f${step % 7}.txt`), `rewritten at ${step}\n`);
    else if (kind === 1) fs.writeFileSync(path.join(directory, `new-${step}.txt`), `${step}\n`);
    else if (kind === 2) fs.rmSync(path.join(directory, `new-${step - 1}.txt`), { force: true });
    else if (kind === 3) fs.renameSync(path.join(directory, `f${step % 7}.txt`), path.join(directory, `moved-${step}.txt`));
    else {
      fs.mkdirSync(path.join(directory, `sub-${step}`), { recursive: true });
      fs.writeFileSync(path.join(directory, `sub-${step}`, 'inside.txt'), `${step}\n`);
    }
  } catch {
    // A path another step already took away: the next step changes something else.
  }
  step += 1;
  if (step === 50) process.stdout.write('ready\n');
}

let stopped = false;
process.stdin.on('end', () => (stopped = true));
process.stdin.resume();
const loop = () => {
  if (stopped || step >= maxSteps) return;
  for (let batch = 0; batch < 5; batch += 1) change();
  setTimeout(loop, 1);
};
loop();
