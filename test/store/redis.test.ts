import t from 'tap'
import { storeContract, authInput, urnFor } from './contract.js'
import { boundaryContract } from './contract-boundaries.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { CONTROL_DAILY_RETAIN_MS, DECISION_RETENTION_MS_DEFAULT } from '../../src/store/types.js'
import { controls } from './controls-contract.js'
import type { ControlsInput } from '../../src/controls/types.js'

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

t.test('a card control daily total: one key on the customer slot, kept a bit more than a day, gone after a compensation', async (t) => {
  const store = await sharedRedisStore(t)
  const urn = urnFor('cd')
  await store.putCustomer(urn, {})
  await store.credit(urn, 1000, 'c')
  const input = authInput(urn, { debitAmount: 300, controls: controls([['ECOM', { dailyMax: 1000 }], 'international']) })
  t.match(await store.authorize(input), { code: '00' })
  const keys = await store.client.keys(`*:cd:${urn}:*`)
  t.equal(keys.length, 2, 'one total per kind')
  for (const k of keys) {
    t.equal(await store.client.get(k), '300')
    const ttl = await store.client.pttl(k)
    t.ok(ttl > 25 * 3600 * 1000 && ttl <= CONTROL_DAILY_RETAIN_MS, `${k} kept ${ttl} ms`)
    t.equal(/\{[^}]*\}/.exec(k)?.[0], /\{[^}]*\}/.exec((await store.client.keys(`*:c:${urn}`))[0] as string)?.[0], 'the customer hash tag')
  }
  t.equal(await store.abandon({ urn, reference: input.reference, attempt: input.attempt, fingerprint: input.fingerprint, limits: [], last4: input.last4, arrivedAtMs: input.nowMs, deadlineAtMs: input.deadlineAtMs, controls: input.controls as ControlsInput }), 'released')
  t.same(await store.client.keys(`*:cd:${urn}:*`), [], 'no trace left')
})
