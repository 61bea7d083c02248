import t from 'tap'
import { storeContract, authInput, urnFor } from './contract.js'
import { boundaryContract, latestAttemptContract } from './contract-boundaries.js'
import { lifecycleContract } from './lifecycle-contract.js'
import { auditContract, ctx } from './audit-contract.js'
import type { AuditContext } from '../../src/domain/audit.js'
import type { Redis } from 'ioredis'
import { privateRedis, sharedRedisStore, uniquePrefix, deleteByPrefix, SHARED_REDIS_URL } from '../helpers/redis.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { bucketOf } from '../../src/store/keys.js'
import { monitorScripts } from '../helpers/script-monitor.js'
import { keySlot } from '../helpers/key-slot.js'
import { abandonInputOf, CONTROL_DAILY_RETAIN_MS, DECISION_RETENTION_MS_DEFAULT } from '../../src/store/types.js'
import { MAX_BALANCE } from '../../src/store/record.js'
import { controls } from './controls-contract.js'

storeContract(t, async (t) => await sharedRedisStore(t))
boundaryContract(t, async (t) => await sharedRedisStore(t))
latestAttemptContract(t, async (t) => await sharedRedisStore(t))
lifecycleContract(t, async (t) => await sharedRedisStore(t))
auditContract(t, async (t) => await sharedRedisStore(t))

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
  // a Redis of its own: MONITOR on the shared one would see (and be slowed by) every other test's traffic
  const own = await privateRedis(t)
  const store = await sharedRedisStore(t, own.url)
  const urn = urnFor('slot')
  const monitor = await monitorScripts(t, own.url)
  // with audit contexts: each record goes with its change, on the customer's slot
  const audit = (): AuditContext => ctx('k', 'X', { urn })
  await store.putCustomer(urn, {}, audit())
  await store.credit(urn, 1000, 'c', undefined, audit())
  await store.debit(urn, 10, 'd', undefined, audit())
  await store.putCard(urn, '4321', 'ACTIVE', audit())
  await store.appendAudit({ ...audit(), outcome: 'refused', before: null, after: null })
  const counted = { ruleId: 'r', mode: 'enforce' as const, measure: 'count' as const, per: 'card' as const, windowStartMs: 0, retainMs: 60000, max: 9, code: '65' as const, values: {} }
  await store.patchCardControls(urn, '4321', { ECOM: { enabled: true } }, audit())
  await store.getCardControls(urn, '4321')
  const abroad = controls([['ECOM', { enabled: false, dailyMax: 5000 }], ['international', { dailyMax: 5000 }]])
  const approved = authInput(urn, { limits: [counted, { ...counted, ruleId: 'u', per: 'urn' }], controls: abroad })
  t.match(await store.authorize(approved), { code: '00' })
  await store.reverse(urn, approved.reference, 40, audit())
  const cutOff = authInput(urn, { limits: [counted], controls: abroad })
  await store.authorize(cutOff)
  t.equal(await store.abandon({ ...cutOff, arrivedAtMs: cutOff.nowMs }), 'released')
  const touches = await monitor.stop(store.client as Redis, urn)

  t.ok(touches.filter((x) => x.kind === 'call').length >= 8, `the scripts were seen (${touches.length} calls and runs)`)
  t.ok(touches.some((x) => x.kind === 'body' && x.keys.some((k) => k.includes(':l:'))), 'including their limit windows')
  t.ok(touches.some((x) => x.kind === 'body' && x.keys.some((k) => /:l:.*:t$/.test(k))), 'and the windows\' running totals')
  t.ok(touches.some((x) => x.kind === 'body' && x.keys.some((k) => k.includes(':cc:')) && x.keys.some((k) => k.includes(':cd:'))), 'and the card controls and their daily totals')
  t.ok(touches.filter((x) => x.kind === 'body' && x.keys.some((k) => k.endsWith(':s:a'))).length >= 7, 'and the audit records')
  const spread = touches.filter((x) => x.slots.length !== 1)
  t.same(spread, [], 'each script call and run on one slot')
  t.equal(new Set(touches.flatMap((x) => x.slots)).size, 1, 'and one customer on one slot')
})

t.test('the script check sees a script that touches two slots', async (t) => {
  // a Redis of its own: MONITOR on the shared one would see (and be slowed by) every other test's traffic
  const own = await privateRedis(t)
  const store = await sharedRedisStore(t, own.url)
  const mark = urnFor('two')
  const monitor = await monitorScripts(t, own.url)
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
  t.equal(await store.abandon(abandonInputOf({ ...input, limits: [] })), 'released')
  t.same(await store.client.keys(`*:cd:${urn}:*`), [], 'no trace left')
})

t.test('a bad audit context is refused before an admin script writes anything', async (t) => {
  const store = await sharedRedisStore(t)
  const urn = urnFor('actx')
  await store.putCustomer(urn, {})
  const k = store.keys
  const moneyOp = (store.client as unknown as { extauthMoneyOp: (...a: string[]) => Promise<unknown> }).extauthMoneyOp.bind(store.client)
  const credit = async (ctx: string, keepS: string): Promise<unknown> => await moneyOp(k.customer(urn), k.moneyOp(urn, 'credit', 'r1'), k.stream(urn),
    'credit', '100', 'r1', urn, '1000', String(MAX_BALANCE), '3600', '', '', ctx, keepS)
  const events = (await store.readDecisionStream(urn)).length
  for (const [ctx, keepS] of [['not json', '60'], ['"a string"', '60'], ['{}', ''], ['{}', '0']] as const) {
    await t.rejects(credit(ctx, keepS), /EXTAUTH_ASSERT/, `${ctx} kept ${keepS || 'none'}: refused`)
  }
  t.equal((await store.getCustomer(urn))?.available, 0, 'nothing credited')
  t.equal(await store.client.exists(k.moneyOp(urn, 'credit', 'r1')), 0, 'the reference not taken')
  t.equal((await store.readDecisionStream(urn)).length, events, 'no event')
  t.match(await credit(JSON.stringify(ctx('k', 'X', { urn })), '60'), ['OK', '0', '100'], 'a good one goes through')
})

t.test('audit records are kept AUDIT_RETENTION_DAYS: older ones dropped on a write, the set expires after the last', async (t) => {
  const day = 24 * 3600_000
  const prefix = uniquePrefix()
  const store = new RedisStore(createRedisClient({ url: SHARED_REDIS_URL }), { prefix, auditRetentionMs: 2 * day })
  await store.connect()
  t.teardown(async () => { await store.close(); await deleteByPrefix(SHARED_REDIS_URL, prefix) })
  const urn = urnFor('aret')
  const key = store.keys.auditIndex(bucketOf(urn))
  // a record older than the retention, as one written three days ago would be
  await store.client.zadd(key, Date.now() - 3 * day, JSON.stringify({ id: 'old' }))
  await store.appendAudit({ ...ctx('k', 'X', { urn }), outcome: 'done', before: null, after: null })
  const members = await store.client.zrange(key, 0, -1)
  t.equal(members.length, 1, 'the older record dropped on the write')
  t.notMatch(members[0], /"id":"old"/)
  const pttl = await store.client.pttl(key)
  t.ok(pttl > 2 * day - 60_000 && pttl <= 2 * day, `the set expires with its last record (${pttl} ms)`)
})
