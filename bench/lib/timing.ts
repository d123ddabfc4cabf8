import { measure } from 'mitata';

/** Summary of one contender's samples, in milliseconds. */
export interface Timing {
  medianMs: number;
  p25Ms: number;
  p75Ms: number;
  samples: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('internal: median of no samples');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function quantile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)))]!;
}

/** Timing of samples already taken (milliseconds). */
export function summarize(samplesMs: readonly number[]): Timing {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return { medianMs: median(sorted), p25Ms: quantile(sorted, 0.25), p75Ms: quantile(sorted, 0.75), samples: sorted.length };
}

/** Milliseconds `work` takes, on the monotonic clock. */
export async function stopwatch(work: () => unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export interface InProcessBenchmark<Input> {
  /** Untimed preparation of one sample (a fresh file, a fresh turn); its result is passed to `run`. */
  prepare: () => Input | Promise<Input>;
  /** The timed work. */
  run: (input: Input) => unknown;
  /** Timed samples (one extra, untimed, warms up first). */
  samples: number;
}

/** Raw samples (milliseconds) of `samples` timed runs, after one untimed warm-up run. */
async function mitataSamples<Input>(benchmark: InProcessBenchmark<Input>, samples: number): Promise<number[]> {
  const stats = await measure(
    function* () {
      // mitata passes computed parameters only to a function that declares them: `input` must stay.
      yield { [0]: benchmark.prepare, bench: (input: Input) => benchmark.run(input) };
    },
    {
      min_samples: samples,
      max_samples: samples,
      min_cpu_time: 0,
      warmup_samples: 0,
      batch_threshold: -1,
      samples_threshold: Number.POSITIVE_INFINITY,
      gc: false,
    },
  );
  return stats.samples.map((nanoseconds) => nanoseconds / 1e6);
}

/**
 * Times in-process work with mitata: `prepare` runs before every sample, off
 * the clock (mitata's computed parameters), then `run` is timed. Exactly
 * `samples` samples after one warm-up call: no batching (each sample changes
 * state on disk), no forced garbage collection, no trimming of outliers
 * before the median.
 */
export async function measureInProcess<Input>(benchmark: InProcessBenchmark<Input>): Promise<Timing> {
  return summarize(await mitataSamples(benchmark, benchmark.samples));
}

/**
 * Times several contenders side by side: the samples of each are taken in
 * `blocks` blocks, alternating between contenders (the first contender
 * rotating), so that a burst of load on a shared machine falls on all of
 * them alike. Each block starts with one untimed warm-up run, so `prepare`
 * is called `samples + blocks` times per contender.
 */
export async function measureSideBySide<Key extends string>(benchmarks: Record<Key, InProcessBenchmark<unknown>>, blocks: number): Promise<Record<Key, Timing>> {
  const keys = Object.keys(benchmarks) as Key[];
  const collected = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<Key, number[]>;
  for (let block = 0; block < blocks; block++) {
    for (const key of [...keys.slice(block % keys.length), ...keys.slice(0, block % keys.length)]) {
      const benchmark = benchmarks[key];
      const inBlock = Math.floor(benchmark.samples / blocks) + (block < benchmark.samples % blocks ? 1 : 0);
      collected[key].push(...(await mitataSamples(benchmark, inBlock)));
    }
  }
  return Object.fromEntries(keys.map((key) => [key, summarize(collected[key])])) as Record<Key, Timing>;
}

/** The same benchmark, its input type forgotten, to sit in one record with others (`measureSideBySide`). */
export function untyped<Input>(benchmark: InProcessBenchmark<Input>): InProcessBenchmark<unknown> {
  return { samples: benchmark.samples, prepare: benchmark.prepare, run: (input) => benchmark.run(input as Input) };
}

/** Waits `milliseconds` (real time). */
export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, milliseconds)));
}
