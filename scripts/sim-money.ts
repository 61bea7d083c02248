// npm run sim:money -- [--steps N] [--seed S] [--store memory|redis|cluster] [--off kind,kind] [--only kind,kind] [--all]
// The deterministic simulation of the money flows (docs/development/money.md). Prints its seed; the same
// seed, steps and switches replay a run exactly. Progress goes to stderr, the summary to stdout; the exit
// status is 1 when an invariant failed.
import { parseArgs } from 'node:util'
import { runSimulation } from './lib/money-sim/engine.js'
import { FAULT_KINDS, OP_KINDS, WORLD_FEATURES, optionsFromEnv, parseOff, type StoreKind } from './lib/money-sim/options.js'
import { memoryStore, redisStore } from './lib/money-sim/stores.js'
import { summarize } from './lib/money-sim/summary.js'

const { values } = parseArgs({
  options: {
    steps: { type: 'string' },
    seed: { type: 'string' },
    store: { type: 'string' },
    off: { type: 'string' },
    /** every kind left out but these (a finding narrowed to its cause) */
    only: { type: 'string' },
    'redis-url': { type: 'string' },
    'fault-rate': { type: 'string' },
    'kill-rate': { type: 'string' },
    all: { type: 'boolean', default: false },
    /** prints the calls, faults and kills whose line contains this text (e.g. a reference) */
    trace: { type: 'string' }
  }
})

const env = { ...process.env }
if (values.steps !== undefined) env.SIM_STEPS = values.steps
if (values.seed !== undefined) env.SIM_SEED = values.seed
if (values.store !== undefined) env.SIM_STORE = values.store
if (values['fault-rate'] !== undefined) env.SIM_FAULT_RATE = values['fault-rate']
if (values['kill-rate'] !== undefined) env.SIM_KILL_RATE = values['kill-rate']
const only = values.only === undefined ? null : parseOff(values.only)
const off = only === null ? parseOff(values.off) : new Set([...OP_KINDS, ...FAULT_KINDS, ...WORLD_FEATURES].filter((k) => !only.has(k)))
const opts = optionsFromEnv(env, {
  off,
  stopOnViolation: values.all !== true,
  trace: values.trace !== undefined,
  progress: (line) => { process.stderr.write(line + '\n') },
  progressEvery: 10_000
})
if (!['memory', 'redis'].includes(opts.store)) throw new Error(`--store: memory or redis (the cluster run is test/money/sim-cluster.test.ts), not ${opts.store as StoreKind}`)
process.stderr.write(`money simulation: seed ${opts.seed}, ${opts.steps} steps on ${opts.store}\n`)
const url = values['redis-url'] ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const result = await runSimulation(opts, opts.store === 'memory' ? memoryStore() : redisStore(url))
if (values.trace !== undefined) {
  for (const line of result.trace ?? []) if (line.includes(values.trace) || line.startsWith('step ')) process.stdout.write(line + '\n')
}
process.stdout.write(summarize(result, opts) + '\n')
process.exitCode = result.violations.length > 0 ? 1 : 0
