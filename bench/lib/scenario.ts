import type { ScenarioReport } from './results.js';
import type { Workspace } from './workspace.js';

export interface ScenarioContext {
  workspace: Workspace;
  /** Small sizes and few samples, for working on the benchmark itself. Figures are not comparable to a full run. */
  quick: boolean;
  /** A real source tree for the capture scenario (default: a copy of an installed package's tree). */
  realTree: string | undefined;
  /** Progress, to stderr. */
  log(message: string): void;
}

export interface Scenario {
  /** Name for `--only`. */
  id: string;
  /** One line for `--help`. */
  summary: string;
  run(context: ScenarioContext): Promise<ScenarioReport[]>;
}
