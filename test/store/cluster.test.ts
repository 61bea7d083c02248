// The store contract on a real Redis Cluster of three masters started by the test: every script must keep
// to one slot (a key outside it fails with CROSSSLOT), and the client must follow the cluster's redirects.
import t from 'tap'
import { Redis } from 'ioredis'
import { startCluster } from '../helpers/cluster.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { uniquePrefix } from '../helpers/redis.js'
import { storeContract, authInput, urnFor } from './contract.js'
import { auditContract } from './audit-contract.js'
import { lifecycleIndexContract } from './lifecycle-contract.js'
import { keySlot } from '../helpers/key-slot.js'
import { seededRandom } from '../../src/sim/prng.js'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { receiver } from '../helpers/receiver.js'
import { RedisOutbox } from '../../src/events/outbox.js'
import { Relay } from '../../src/events/relay.js'
import { createWebhookSender } from '../../src/events/webhook.js'
import { createEventMetrics } from '../../src/events/metrics.js'
import { RedisJournal } from '../../src/journal/source.js'

t.test('on a three-master Redis Cluster', async (t) => {
  const nodes = await startCluster(t)
  const make = async (tt: { teardown: (fn: () => unknown) => void }): Promise<RedisStore> => {
    const store = new RedisStore(createRedisClient({ clusterNodes: nodes }), { prefix: uniquePrefix() })
    await store.connect()
    tt.teardown(async () => { await store.close() })
    return store
  }
  storeContract(t, make)
  // the audit records on the slot of their customer's bucket, read back over all three masters
  auditContract(t, make)
  // a transfer's record and its two customers' indexes are in three slots
  lifecycleIndexContract(t, make)

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

  t.test('the slot the tests compute is the slot the cluster computes', async (t) => {
    const admin = new Redis({ ...nodes[0], lazyConnect: true, retryStrategy: () => null })
    admin.on('error', () => {})
    await admin.connect()
    t.teardown(() => { admin.disconnect() })
    const store = await make(t)
    const urn = urnFor('ks')
    await store.putCustomer(urn, {})
    await store.credit(urn, 1000, 'seed')
    await store.authorize(authInput(urn))
    // every key the store has written on this cluster so far, whatever their layout
    const storeKeys = (await Promise.all((store.client as import('ioredis').Cluster).nodes('master').map(async (n) => await n.keys('*')))).flat().slice(0, 300)
    t.ok(storeKeys.length >= 3, `the store's keys (${storeKeys.length})`)
    const random = seededRandom(1)
    const alphabet = 'ab{}:é0'
    const made = Array.from({ length: 200 }, () => Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''))
    const keys = [...storeKeys, ...made]
    const theirs = await Promise.all(keys.map(async (k) => Number(await admin.call('CLUSTER', 'KEYSLOT', k))))
    const differ = keys.filter((k, i) => keySlot(k) !== theirs[i])
    t.same(differ, [], `${keys.length} keys, the same slot on both sides`)
  })

  t.test('a decision by reference alone, whichever master holds it', async (t) => {
    const store = await make(t)
    const journal = new RedisJournal(store.client, store.keys.prefix)
    const urns = Array.from({ length: 12 }, () => urnFor('rf'))
    for (const urn of urns) {
      await store.putCustomer(urn, {})
      await store.credit(urn, 1000, 'seed')
      await store.authorize(authInput(urn, { reference: 'CL-SHARED' }))
    }
    t.same((await journal.byReference('CL-SHARED')).map((e) => e.urn).sort(), [...urns].sort(), 'every customer\'s decision')
    const masters = new Set(urns.map((u) => (store.client as import('ioredis').Cluster).slots[keySlot(store.keys.stream(u))]?.[0]))
    t.ok(masters.size > 1, `the decisions are on ${masters.size} masters`)
  })

  t.test('the events relay reads the outbox of every bucket on every master', async (t) => {
    const store = await make(t)
    const rx = await receiver(t)
    const sender = createWebhookSender({ url: rx.url, secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` })
    const relay = new Relay({ outbox: new RedisOutbox(store.client, store.keys.prefix), send: sender.send, metrics: createEventMetrics(new Registry()), log: pino({ level: 'silent' }), sweepMs: 100 })
    t.teardown(async () => { await relay.stop(); await sender.close() })
    const urns = Array.from({ length: 30 }, () => urnFor('ev'))
    // written before the relay starts and without its hint: found by the sweep of all 1,024 buckets
    for (const urn of urns) {
      await store.putCustomer(urn, {})
      await store.credit(urn, 500, 'seed')
    }
    relay.start()
    await rx.until(() => rx.accepted().length >= urns.length * 2)
    for (const urn of urns) t.same(rx.accepted().filter((e) => e.data.urn === urn).map((e) => e.type), ['customer.updated', 'funds.credited'], urn)
    const masters = new Set(urns.map((u) => (store.client as import('ioredis').Cluster).slots[keySlot(store.keys.stream(u))]?.[0]))
    t.equal(masters.size, 3, 'the customers\' streams are on all three masters')
  })
})
