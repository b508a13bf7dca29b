/**
 * What a chaos scenario is: a fault, piled on under load, and the figures that say what it did.
 * Every figure under `zero` must be 0 for the scenario to pass; `info` is reported beside them.
 */
import type { Audit, ChaosWorld } from './world.js';

export interface ScenarioSize {
  /** Jobs (or requests) the scenario drives: hundreds in `npm run chaos`, a few in `npm test`. */
  readonly jobs: number;
  /** The short run of `npm test`: shorter outages and fewer rounds as well. */
  readonly quick: boolean;
}

export interface ScenarioResult {
  /** Figures that must be 0: lost, duplicated, duplicatedUpstream, doubleCharged, ledgerDrift, crashes, and the scenario's own. */
  readonly zero: Readonly<Record<string, number>>;
  /** Figures reported beside them (jobs, delivered, refunded, how long an outage lasted, …). */
  readonly info: Readonly<Record<string, number | string>>;
  /** What each non-zero figure is made of. */
  readonly details: readonly string[];
}

export interface Scenario {
  readonly name: string;
  readonly title: string;
  /**
   * False for a scenario only `npm run chaos` runs, not the short suite in `npm test`: one whose
   * shortest honest run is long (a killed worker's entries wait out their 30 s lock).
   */
  readonly inShortSuite?: boolean;
  run(world: ChaosWorld, size: ScenarioSize): Promise<ScenarioResult>;
}

/** The audit's figures as a scenario reports them, with the crashes since `crashesBefore`. */
export function auditFigures(audit: Audit, world: ChaosWorld, crashesBefore: number): Pick<ScenarioResult, 'zero' | 'details'> & { info: Record<string, number> } {
  const crashes = world.crashes().slice(crashesBefore);
  return {
    zero: {
      lost: audit.lost,
      duplicated: audit.duplicated,
      duplicatedUpstream: audit.duplicatedUpstream,
      doubleCharged: audit.doubleCharged,
      ledgerDrift: audit.ledgerDrift,
      crashes: crashes.length,
    },
    info: {
      jobs: audit.jobs,
      delivered: audit.delivered,
      refunded: audit.refunded,
      ...(audit.uncertain > 0 && { uncertain: audit.uncertain, uncertainKept: audit.uncertainKept }),
    },
    details: [...audit.details, ...crashes.map((crash) => `crash: ${crash.name} exited (${crash.code ?? crash.signal}): ${crash.tail.slice(-600)}`)],
  };
}
