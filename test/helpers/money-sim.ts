// Runs the money simulation inside a test: seed from SIM_SEED or the given default (printed either way),
// steps from SIM_STEPS or the default; fails with the summary, which names the replay command.
import type { Test } from 'tap'
import { runSimulation, type SimResult, type StoreUnderTest } from '../../scripts/lib/money-sim/engine.js'
import { optionsFromEnv, type SimOptions, type StoreKind } from '../../scripts/lib/money-sim/options.js'
import { summarize } from '../../scripts/lib/money-sim/summary.js'
import { CI_OFF } from './money-known-holes.js'

export interface CiRun {
  store: StoreKind
  seed: number
  steps: number
  trace?: boolean
  stopOnViolation?: boolean
  off?: readonly string[]
}

export function ciOptions (run: CiRun): SimOptions {
  return optionsFromEnv(process.env, {
    seed: run.seed,
    steps: run.steps,
    store: run.store,
    off: new Set([...CI_OFF, ...(run.off ?? [])]),
    trace: run.trace ?? false,
    stopOnViolation: run.stopOnViolation ?? true
  })
}

export async function simulate (t: Test, opts: SimOptions, makeStore: (clock: () => number) => Promise<StoreUnderTest>): Promise<SimResult> {
  t.comment(`money simulation: seed ${opts.seed}, ${opts.steps} steps on ${opts.store} (replay with SIM_SEED=${opts.seed})`)
  const r = await runSimulation(opts, makeStore)
  t.comment(summarize(r, opts))
  return r
}

/** The run did what it is there for: every kind it left on happened at least once. */
export function assertCoverage (t: Test, r: SimResult, opts: SimOptions, expectOps: readonly string[], expectFaults: readonly string[]): void {
  for (const k of expectOps.filter((k) => !opts.off.has(k))) t.ok((r.counts.ops[k] ?? 0) > 0, `operation ${k} ran`)
  // a party's faults need the operations that call it
  const reachable = (k: string): boolean => !(k.startsWith('prepaid-') && opts.off.has('transfer') && opts.off.has('unload')) && !(k.startsWith('gateway-') && opts.off.has('load'))
  for (const k of expectFaults.filter((k) => !opts.off.has(k) && reachable(k))) t.ok((r.counts.faults[k] ?? 0) > 0, `fault ${k} injected`)
}
