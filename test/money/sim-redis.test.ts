// The money simulation on Redis: the shared server under a key prefix of the run's own.
import t from 'tap'
import { FAULT_KINDS, OP_KINDS } from '../../scripts/lib/money-sim/options.js'
import { redisStore } from '../../scripts/lib/money-sim/stores.js'
import { SHARED_REDIS_URL } from '../helpers/redis.js'
import { assertCoverage, ciOptions, simulate } from '../helpers/money-sim.js'

t.test('3,000 steps on Redis hold every invariant', async (t) => {
  const opts = ciOptions({ store: 'redis', seed: 20261124, steps: 3_000 })
  const r = await simulate(t, opts, redisStore(SHARED_REDIS_URL))
  t.same(r.violations, [], 'no invariant failed')
  t.equal(r.stepsRun, opts.steps, 'every step ran')
  assertCoverage(t, r, opts, OP_KINDS.filter((k) => k !== 'time-jump'), FAULT_KINDS.filter((k) => k !== 'kill-compensating'))
})
