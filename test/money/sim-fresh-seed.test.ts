// The money simulation on a seed nobody chose, beside the fixed seeds of the other runs: SIM_FRESH_SEED
// (.ci/run draws one per CI run and prints it before and after the tests), else one drawn here. The seed is
// printed either way, and a failure names the command that replays it (docs/development/money.md).
import t from 'tap'
import { FAULT_KINDS, OP_KINDS, randomSeed } from '../../scripts/lib/money-sim/options.js'
import { memoryStore, redisStore } from '../../scripts/lib/money-sim/stores.js'
import { replayCommand } from '../../scripts/lib/money-sim/summary.js'
import { SHARED_REDIS_URL } from '../helpers/redis.js'
import { ciOptions, simulate } from '../helpers/money-sim.js'

function freshSeed (text: string | undefined): number {
  if (text === undefined || text === '') return randomSeed()
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`SIM_FRESH_SEED: a whole number, not ${text}`)
  return n
}

const seed = freshSeed(process.env.SIM_FRESH_SEED)

for (const [store, steps] of [['memory', 4_500], ['redis', 1_500]] as const) {
  t.test(`${steps} steps on ${store}, on a fresh seed, hold every invariant`, async (t) => {
    const opts = ciOptions({ store, seed, steps })
    t.comment(`fresh seed ${opts.seed} on ${store}: replay with ${replayCommand(opts, opts.steps)}`)
    const r = await simulate(t, opts, store === 'memory' ? memoryStore() : redisStore(SHARED_REDIS_URL))
    const first = r.violations[0]
    t.same(r.violations, [], first === undefined ? 'no invariant failed' : `seed ${opts.seed} failed; replay: ${replayCommand(opts, first.step)}`)
    t.equal(r.stepsRun, opts.steps, 'every step ran')
    // a short run on a random seed need not meet every kind: the fixed runs assert coverage
    t.ok(Object.keys(r.counts.ops).length >= Math.min(OP_KINDS.length - 2, 8), 'the run made operations of many kinds')
    t.ok(Object.keys(r.counts.faults).length > Math.min(FAULT_KINDS.length / 2, 8), 'and injected faults of many kinds')
  })
}
