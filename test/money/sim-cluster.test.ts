// The money simulation on a Redis Cluster of three masters: every script keeps to its customer's slot
// under faults and kills too.
import t from 'tap'
import { clusterStore } from '../../scripts/lib/money-sim/stores.js'
import { startCluster } from '../helpers/cluster.js'
import { ciOptions, simulate } from '../helpers/money-sim.js'

t.test('1,000 steps on a three-master Redis Cluster hold every invariant', async (t) => {
  const nodes = await startCluster(t)
  const opts = ciOptions({ store: 'cluster', seed: 20261125, steps: 1_000 })
  const r = await simulate(t, opts, clusterStore(nodes))
  t.same(r.violations, [], 'no invariant failed')
  t.equal(r.stepsRun, opts.steps, 'every step ran')
  t.ok(r.counts.storeCalls > 2_000, 'the run made its calls')
})
