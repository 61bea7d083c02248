// The same seeded operations on the memory store and on Redis: every store call, in the same order, must get
// the same answer. The `rules test` command and `npm start` without Redis run on the memory store, so a
// difference here is a decision an operator would see differently in production.
import t from 'tap'
import { memoryStore, redisStore } from '../../scripts/lib/money-sim/stores.js'
import { SHARED_REDIS_URL } from '../helpers/redis.js'
import { ciOptions, simulate } from '../helpers/money-sim.js'

t.test('memory and Redis answer 1,500 steps of calls alike', async (t) => {
  // time-jump moves a clock only the memory store follows; invariants are the other tests' business here
  const base = { seed: 20261126, steps: 1_500, trace: true, stopOnViolation: false, off: ['time-jump'] }
  const mem = await simulate(t, ciOptions({ ...base, store: 'memory' }), memoryStore())
  const red = await simulate(t, ciOptions({ ...base, store: 'redis' }), redisStore(SHARED_REDIS_URL))
  const a = mem.trace ?? []
  const b = red.trace ?? []
  t.ok(a.length > 4_000, `the memory run made its calls (${a.length} lines)`)
  const i = a.findIndex((line, n) => line !== b[n])
  const at = i < 0 && a.length !== b.length ? Math.min(a.length, b.length) : i
  t.equal(at, -1, at < 0 ? 'the same calls and answers' : `first difference at line ${at}:\n  memory: ${a[at] ?? '(end)'}\n  redis:  ${b[at] ?? '(end)'}`)
})
