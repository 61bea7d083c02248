// The stand-in simulation (test/standin/sim.ts) on both stores: outage phases, bursts, repeats, deadlines,
// kills; standin-within-caps and standin-replayed-once after every step. SIM_SEED and SIM_STEPS replay or
// lengthen a run.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { SHARED_REDIS_URL, sharedRedisStore } from '../helpers/redis.js'
import { runStandInSim } from './sim.js'

const seed = Number(process.env.SIM_SEED ?? 20261127)
const steps = Number(process.env.SIM_STEPS ?? 600)
// every event kept: the books are checked against all of them
const backlogMax = 1_000_000_000

t.test(`stand-in simulation on the memory store (seed ${seed}, ${steps} steps)`, async (t) => {
  const r = await runStandInSim(seed, steps, async () => new MemoryStore({ backlogMax }))
  t.comment(JSON.stringify(r.counts))
  t.same(r.violations, [], `no invariant failed (replay with SIM_SEED=${seed})`)
  t.equal(r.steps, steps)
  for (const k of ['00 standin', '05 standin', 'kill', 'kill mid-flush', 'store down', 'approved by both instances']) t.ok((r.counts[k] ?? 0) > 0, `${k} happened`)
})

t.test(`stand-in simulation on Redis (seed ${seed + 1}, ${Math.ceil(steps / 3)} steps)`, async (t) => {
  const r = await runStandInSim(seed + 1, Math.ceil(steps / 3), async () => await sharedRedisStore(t, SHARED_REDIS_URL, { backlogMax }))
  t.comment(JSON.stringify(r.counts))
  t.same(r.violations, [], `no invariant failed (replay with SIM_SEED=${seed})`)
})
