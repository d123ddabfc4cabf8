/**
 * The benchmark suite (`npm run bench`): rewindable against the tools it
 * replaces (a shadow git repository, untracked writes), scenario by
 * scenario, each side by side with its baseline in one run. Prints medians,
 * ratios and PASS/MISS against their targets, and writes
 * docs/benchmarks.md, docs/benchmarks-chart.svg and the Benchmarks section
 * of README.md.
 *
 *   npm run bench                          everything (writes the docs)
 *   npm run bench -- --only checkpoint,edit
 *   npm run bench -- --quick               small sizes, few samples (does not write the docs)
 *   npm run bench -- --real-tree <dir>     the real source tree for the capture scenario
 *   npm run bench -- --write / --no-write  force writing the docs, or not
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkpointChart } from './lib/chart.js';
import { describeMachine, loadAverage } from './lib/machine.js';
import { markdownReport, readmeSection, replaceReadmeSection } from './lib/markdown-report.js';
import { printReport } from './lib/print-report.js';
import { verdictOf, type ScenarioReport } from './lib/results.js';
import type { Scenario } from './lib/scenario.js';
import { Workspace } from './lib/workspace.js';
import { captureJournal } from './scenarios/capture-journal.js';
import { captureScope } from './scenarios/capture-scope.js';
import { checkpointPerTurn } from './scenarios/checkpoint-per-turn.js';
import { cliStartup } from './scenarios/cli-startup.js';
import { dryRunStatistics } from './scenarios/dry-run-statistics.js';
import { hookCost } from './scenarios/hook-cost.js';
import { rewindFiles } from './scenarios/rewind-files.js';
import { rewindPeakMemory } from './scenarios/rewind-peak-memory.js';
import { storeSize } from './scenarios/store-size.js';
import { timelinePage } from './scenarios/timeline-page.js';
import { trackedEdit } from './scenarios/tracked-edit.js';

const scenarios: Scenario[] = [checkpointPerTurn, trackedEdit, rewindFiles, dryRunStatistics, storeSize, rewindPeakMemory, captureScope, cliStartup, hookCost, captureJournal, timelinePage];
const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseArguments(argv: readonly string[]) {
  const value = (name: string) => {
    const index = argv.indexOf(name);
    return index === -1 ? undefined : argv[index + 1];
  };
  const only = value('--only')?.split(',').map((name) => name.trim());
  for (const name of only ?? []) {
    if (!scenarios.some((scenario) => scenario.id === name)) {
      throw new Error(`Unknown scenario "${name}" in --only. Scenarios: ${scenarios.map((scenario) => scenario.id).join(', ')}.`);
    }
  }
  return {
    help: argv.includes('--help'),
    only,
    quick: argv.includes('--quick'),
    realTree: value('--real-tree'),
    write: argv.includes('--write') ? true : argv.includes('--no-write') ? false : undefined,
  };
}

const options = parseArguments(process.argv.slice(2));
if (options.help) {
  console.log('npm run bench -- [--only <names>] [--quick] [--real-tree <dir>] [--write | --no-write]\n');
  for (const scenario of scenarios) console.log(`  ${scenario.id.padEnd(12)} ${scenario.summary}`);
  process.exit(0);
}
const selected = scenarios.filter((scenario) => options.only === undefined || options.only.includes(scenario.id));
const writeDocs = options.write ?? (options.only === undefined && !options.quick);

const started = performance.now();
const loadBefore = loadAverage();
const workspace = new Workspace();
const machine = describeMachine(workspace.root);
console.log(`rewindable benchmarks: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, git ${machine.git}, ${machine.filesystem}`);
console.log(`load average before: ${loadBefore}${options.quick ? '  (quick mode: small sizes, few samples)' : ''}`);
const reports: ScenarioReport[] = [];
try {
  for (const scenario of selected) {
    const scenarioStarted = performance.now();
    const context = {
      workspace,
      quick: options.quick,
      realTree: options.realTree,
      log: (message: string) => process.stderr.write(`  [${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}\n`),
    };
    for (const report of await scenario.run(context)) {
      reports.push(report);
      console.log(printReport(report));
    }
    console.log(`(${scenario.id}: ${((performance.now() - scenarioStarted) / 1000).toFixed(1)} s)`);
  }
} finally {
  workspace.dispose();
}
const loadAfter = loadAverage();
const durationSeconds = (performance.now() - started) / 1000;
const targets = reports.flatMap((report) => report.rows.filter((row) => row.target !== undefined));
const missed = targets.filter((row) => verdictOf(row) === 'MISS').length;
console.log(`\n${targets.length - missed} of ${targets.length} targets met. Run time ${(durationSeconds / 60).toFixed(1)} min; load average before ${loadBefore}, after ${loadAfter}.`);

if (writeDocs) {
  const docs = path.join(repositoryRoot, 'docs');
  const chartPoints = reports.find((report) => report.chart !== undefined)?.chart;
  const chartFile = chartPoints === undefined ? undefined : 'benchmarks-chart.svg';
  if (chartPoints !== undefined) fs.writeFileSync(path.join(docs, chartFile!), await checkpointChart(chartPoints));
  const given = process.argv.slice(2).filter((argument) => argument !== '--write');
  const command = given.length === 0 ? 'npm run bench' : `npm run bench -- ${given.join(' ')}`;
  const run = { machine, loadBefore, loadAfter, durationSeconds, command, quick: options.quick, chartFile };
  const report = path.join(docs, 'benchmarks.md');
  fs.writeFileSync(report, markdownReport(reports, run, fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : ''));
  const readme = path.join(repositoryRoot, 'README.md');
  fs.writeFileSync(readme, replaceReadmeSection(fs.readFileSync(readme, 'utf8'), readmeSection(reports, run)));
  console.log(`Wrote docs/benchmarks.md${chartFile ? ', docs/benchmarks-chart.svg' : ''} and the Benchmarks section of README.md.`);
} else {
  console.log('docs/benchmarks.md not written (partial or quick run; pass --write to write it anyway).');
}
