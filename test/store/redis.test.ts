import t from 'tap'
import { storeContract, authInput, urnFor } from './contract.js'
import { boundaryContract } from './contract-boundaries.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { DECISION_RETENTION_MS_DEFAULT } from '../../src/store/types.js'

storeContract(t, async (t) => await sharedRedisStore(t))
boundaryContract(t, async (t) => await sharedRedisStore(t))

t.test('decisions are kept at least 7 days', async (t) => {
  const store = await sharedRedisStore(t)
  const urn = urnFor('ttl')
  const input = authInput(urn)
  await store.authorize(input)
  const keys = await store.client.keys(`*:d:${urn}:${input.reference}`)
  t.equal(keys.length, 1)
  const ttl = await store.client.ttl(keys[0] as string)
  t.ok(ttl > 7 * 24 * 3600 && ttl <= DECISION_RETENTION_MS_DEFAULT / 1000, `ttl ${ttl}s`)
})

t.test('every key of one customer shares one hash tag (one Cluster slot)', async (t) => {
  const store = await sharedRedisStore(t)
  const urn = urnFor('slot')
  await store.putCustomer(urn, {})
  await store.credit(urn, 1000, 'c')
  await store.putCard(urn, '4321', 'ACTIVE')
  await store.authorize(authInput(urn, { limits: [{ ruleId: 'r', mode: 'enforce', measure: 'count', per: 'card', windowStartMs: 0, retainMs: 60000, max: 9, code: '65', values: {} }] }))
  const keys = (await store.client.keys('extauth-test:*')).filter((k) => k.includes(urn) || k.endsWith(':s'))
  const tags = new Set(keys.filter((k) => k.includes(urn)).map((k) => /\{[^}]*\}/.exec(k)?.[0]))
  t.equal(tags.size, 1, `one tag for ${keys.length} keys`)
  const slots = new Set(await Promise.all(keys.filter((k) => k.includes(urn)).map(async (k) => await store.client.call('CLUSTER', 'KEYSLOT', k).catch(() => null))))
  t.ok(slots.size <= 1)
})
