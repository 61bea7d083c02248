// The money simulation on a Redis Cluster of three masters: every script keeps to its customer's slot
// under faults and kills too; in holds mode, expiry and the platform's statements too (the posting and
// expiry scripts on each bucket's slot, expiry and the exception queue reading every master).
import t from 'tap'
import { clusterStore } from '../../scripts/lib/money-sim/stores.js'
import { startCluster } from '../helpers/cluster.js'
import { ciOptions, simulate } from '../helpers/money-sim.js'

t.test('on a three-master Redis Cluster', async (t) => {
  const nodes = await startCluster(t)

  t.test('1,000 steps hold every invariant', async (t) => {
    const opts = ciOptions({ store: 'cluster', seed: 20261125, steps: 1_000 })
    const r = await simulate(t, opts, clusterStore(nodes))
    t.same(r.violations, [], 'no invariant failed')
    t.equal(r.stepsRun, opts.steps, 'every step ran')
    t.ok(r.counts.storeCalls > 2_000, 'the run made its calls')
  })

  t.test('holds mode with statements: 600 steps hold every invariant, books-agree among them', async (t) => {
    const opts = { ...ciOptions({ store: 'cluster', seed: 20261129, steps: 600 }), settlement: 'holds' as const }
    const r = await simulate(t, opts, clusterStore(nodes))
    t.same(r.violations, [], 'no invariant failed')
    t.equal(r.stepsRun, opts.steps, 'every step ran')
    const ops = r.counts.ops
    t.ok((ops.expiry ?? 0) > 0, `holds expired (${ops.expiry ?? 0})`)
    t.ok((ops.statements ?? 0) > 0 && (ops['statement-lines'] ?? 0) > 0, `statements imported (${ops.statements ?? 0}, ${ops['statement-lines'] ?? 0} lines)`)
  })
})
