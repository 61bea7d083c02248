// The store contract on a real Redis Cluster of three masters started by the test: every script must keep
// to one slot (a key outside it fails with CROSSSLOT), and the client must follow the cluster's redirects.
import t from 'tap'
import { startCluster } from '../helpers/cluster.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { uniquePrefix } from '../helpers/redis.js'
import { storeContract, authInput, urnFor } from './contract.js'

t.test('on a three-master Redis Cluster', async (t) => {
  const nodes = await startCluster(t)
  const make = async (tt: { teardown: (fn: () => unknown) => void }): Promise<RedisStore> => {
    const store = new RedisStore(createRedisClient({ clusterNodes: nodes }), { prefix: uniquePrefix() })
    await store.connect()
    tt.teardown(async () => { await store.close() })
    return store
  }
  storeContract(t, make)

  t.test('customers spread over the slots of all three masters', async (t) => {
    const store = await make(t)
    const urns = Array.from({ length: 30 }, () => urnFor('cl'))
    for (const urn of urns) {
      await store.putCustomer(urn, {})
      await store.credit(urn, 1000, 'seed')
      t.match(await store.authorize(authInput(urn)), { code: '00' })
    }
    const client = store.client as import('ioredis').Cluster
    const sizes = await Promise.all(client.nodes('master').map(async (n) => await n.dbsize()))
    t.equal(sizes.filter((s) => s > 0).length, 3, `keys on every master (${sizes.join(', ')})`)
  })
})
