// The settlement contract on a real Redis Cluster of three masters: every settlement script keeps to its
// bucket's slot (a key outside it fails with CROSSSLOT), and expiry and the exception queue read every master.
import t from 'tap'
import { startCluster } from '../helpers/cluster.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { uniquePrefix } from '../helpers/redis.js'
import { settlementContract } from './contract.js'

t.test('on a three-master Redis Cluster', async (t) => {
  const nodes = await startCluster(t)
  settlementContract(t, async (tt) => {
    const store = new RedisStore(createRedisClient({ clusterNodes: nodes }), { prefix: uniquePrefix() })
    await store.connect()
    tt.teardown(async () => { await store.close() })
    return store
  })
})
