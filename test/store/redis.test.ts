import t from 'tap'
import { storeContract, authInput, urnFor } from './contract.js'
import { boundaryContract } from './contract-boundaries.js'
import type { Redis } from 'ioredis'
import { SHARED_REDIS_URL, sharedRedisStore } from '../helpers/redis.js'
import { monitorScripts } from '../helpers/script-monitor.js'
import { keySlot } from '../helpers/key-slot.js'
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

t.test('every script touches one Cluster slot: the keys it is given and the keys it uses', async (t) => {
  const store = await sharedRedisStore(t)
  const urn = urnFor('slot')
  const monitor = await monitorScripts(t, SHARED_REDIS_URL)
  await store.putCustomer(urn, {})
  await store.credit(urn, 1000, 'c')
  await store.debit(urn, 10, 'd')
  await store.putCard(urn, '4321', 'ACTIVE')
  const counted = { ruleId: 'r', mode: 'enforce' as const, measure: 'count' as const, per: 'card' as const, windowStartMs: 0, retainMs: 60000, max: 9, code: '65' as const, values: {} }
  const approved = authInput(urn, { limits: [counted, { ...counted, ruleId: 'u', per: 'urn' }] })
  t.match(await store.authorize(approved), { code: '00' })
  await store.reverse(urn, approved.reference, 40)
  const cutOff = authInput(urn, { limits: [counted] })
  await store.authorize(cutOff)
  t.equal(await store.abandon({ ...cutOff, arrivedAtMs: cutOff.nowMs }), 'released')
  const touches = await monitor.stop(store.client as Redis, urn)

  t.ok(touches.filter((x) => x.kind === 'call').length >= 8, `the scripts were seen (${touches.length} calls and runs)`)
  t.ok(touches.some((x) => x.kind === 'body' && x.keys.some((k) => k.includes(':l:'))), 'including their limit windows')
  const spread = touches.filter((x) => x.slots.length !== 1)
  t.same(spread, [], 'each script call and run on one slot')
  t.equal(new Set(touches.flatMap((x) => x.slots)).size, 1, 'and one customer on one slot')
})

t.test('the script check sees a script that touches two slots', async (t) => {
  const store = await sharedRedisStore(t)
  const mark = urnFor('two')
  const monitor = await monitorScripts(t, SHARED_REDIS_URL)
  const prefix = `extauth-test:${mark}:`
  t.teardown(async () => { await store.client.del(`${prefix}{a}x`, `${prefix}{b}y`) })
  await store.client.eval("redis.call('SET', KEYS[1], '1') redis.call('SET', ARGV[1], '1') return 1", 1, `${prefix}{a}x`, `${prefix}{b}y`)
  const touches = await monitor.stop(store.client as Redis, mark)
  t.match(touches, [{ kind: 'call', slots: [keySlot('a')] }, { kind: 'body', slots: [keySlot('a'), keySlot('b')] }])
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
