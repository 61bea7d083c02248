// The stored decision record: records written in the first format (a JSON object, before the compact one)
// stay readable and are handled right for their whole life by every script and reader; the compact format
// reads back as what was written, and the Redis store shows the same record as the memory store.
import t from 'tap'
import { PassThrough } from 'node:stream'
import { sharedRedisStore } from '../helpers/redis.js'
import { authInput, storeContract, urnFor } from './contract.js'
import { MemoryStore } from '../../src/store/memory.js'
import { RedisJournal } from '../../src/journal/source.js'
import { exportJournal } from '../../src/cli/decisions-export.js'
import { Keys, bucketOf, part, refShard } from '../../src/store/keys.js'
import { decodeRecord, encodeRecord } from '../../src/store/record-format.js'
import { eventBody } from '../../src/store/outbox-entry.js'
import { pairsToObject } from '../../src/store/control-fields.js'
import type { AuthorizeInput, DecisionRecord, Store } from '../../src/store/types.js'
import { fingerprintOf } from '../../src/decision/pipeline.js'

/**
 * A record as the store wrote it before the compact format (taken from a Redis of that version and given
 * this test's names): an approval of 3119 counted in one limit window and one daily total.
 */
function formatOneRecord (o: { urn: string, reference: string, attempt: string, limitKey: string, dailyKey: string, arrivedAtMs: number }): string {
  const { urn, reference, attempt, limitKey, dailyKey, arrivedAtMs } = o
  const meta = `{"rulesVersion":"0e20ab44356b","shadowHits":[],"transactionAmount":"3119","currencyCode":"356","channel":"ECOM","request":{"customerId":"C-${urn}","urn":"${urn}","merchantName":"Load Test Store","terminalId":"T0001","mcc":"5411","systemTraceAuditNumber":"1","cardNetwork":"RUPAY","channel":"ECOM","merchantId":"M-LOAD-1","transactionAmount":"3119","transactionReferenceNumber":"${reference}","currencyCode":"356","last4Digits":"4321"},"limits":[{"ruleId":"ecom-hourly-count","mode":"shadow","values":{"channel":"ECOM"}}]}`
  return `{"cardStatus":null,"code":"00","released":"0","reference":"${reference}","reason":"approved","limitSeen":null,"customerStatus":"ACTIVE","ruleId":null,` +
    `"limitEntries":[["${limitKey}","3119|${reference}"]],"controlsSeen":{"ECOM":{"e":"1","p":"","d":""}},"answeredOnDeadline":false,"arrivedAtMs":${arrivedAtMs},` +
    `"availableSeen":null,"deadlineAtMs":${arrivedAtMs + 1200},"controlEntries":[["${dailyKey}","3119"]],"attempt":"${attempt}","debit":"3119",` +
    `"meta":${JSON.stringify(meta)},"reversal":null,"decidedCode":null,"held":"3119","last4":"4321","control":null,"decidedAtMs":${arrivedAtMs + 12},` +
    '"shadowLimitHits":{},"fingerprint":"_wVbfSOzpDW3VFnsCc19K-",' + `"urn":"${urn}"}`
}

const OPENING = 100_000
const DEBIT = 3119

/** Puts a format-one approval in Redis with what its script did beside it: the hold, the entries, the indexes. */
async function storeFormatOne (t: Parameters<typeof sharedRedisStore>[0], tag: string): Promise<{ store: Awaited<ReturnType<typeof sharedRedisStore>>, urn: string, reference: string, attempt: string, key: string, limitKey: string, dailyKey: string, arrivedAtMs: number }> {
  const store = await sharedRedisStore(t)
  const urn = urnFor(tag)
  const reference = `OLD-${tag}`
  const attempt = '4e756278-68a0-46a2-b91e-cba77c2bc2f3'
  const k = store.keys
  await store.putCustomer(urn, {})
  await store.credit(urn, OPENING, 'open')
  const arrivedAtMs = Date.now() - 60_000
  const limitKey = k.limit(urn, '4321', { ruleId: 'ecom-hourly-count', per: 'card' })
  const dailyKey = k.controlDaily(urn, '4321', 'ECOM', '20261124')
  const key = k.decision(urn, reference)
  await store.client.set(key, formatOneRecord({ urn, reference, attempt, limitKey, dailyKey, arrivedAtMs }), 'EX', 3600)
  await store.client.hincrby(k.customer(urn), 'available', -DEBIT)
  await store.client.zadd(limitKey, arrivedAtMs, `${DEBIT}|${reference}`)
  await store.client.pexpire(limitKey, 3_600_000)
  await store.client.set(dailyKey, String(DEBIT), 'PX', 3_600_000)
  const b = bucketOf(urn)
  await store.client.zadd(k.journalIndex(b), arrivedAtMs, `${part(urn)}:${part(reference)}`)
  await store.client.hset(k.refIndex(b, refShard(part(reference))), part(reference), part(urn))
  return { store, urn, reference, attempt, key, limitKey, dailyKey, arrivedAtMs }
}

/** The same transaction asked again (fingerprint of 3119 with card 4321) */
function again (urn: string, reference: string, over: Partial<AuthorizeInput> = {}): AuthorizeInput {
  return authInput(urn, { reference, debitAmount: DEBIT, fingerprint: '_wVbfSOzpDW3VFnsCc19K-', ...over })
}

t.test('the pipeline fingerprints a transaction as the stored records of earlier versions do', async (t) => {
  // a repeat of a stored transaction is told from a conflicting one by this value: it never changes
  t.equal(fingerprintOf(DEBIT, '4321'), '_wVbfSOzpDW3VFnsCc19K-', 'the format-one record\'s, above')
  t.not(fingerprintOf(DEBIT, '4322'), fingerprintOf(DEBIT, '4321'))
  t.not(fingerprintOf(DEBIT + 1, '4321'), fingerprintOf(DEBIT, '4321'))
})

t.test('a format-one record reads as it always did: lookup, journal by reference, export', async (t) => {
  const { store, urn, reference, attempt, limitKey, dailyKey, arrivedAtMs } = await storeFormatOne(t, 'f1read')
  const rec = await store.getDecision(urn, reference)
  t.match(rec, {
    urn, reference, last4: '4321', attempt, code: '00', reason: 'approved', ruleId: null, debit: '3119', held: '3119', released: '0',
    shadowLimitHits: [], limitEntries: [[limitKey, `3119|${reference}`]], controlEntries: [[dailyKey, '3119']], arrivedAtMs,
    deadlineAtMs: arrivedAtMs + 1200, decidedAtMs: arrivedAtMs + 12, answeredOnDeadline: false, decidedCode: null, reversal: null,
    customerStatus: 'ACTIVE', cardStatus: null, controlsSeen: { ECOM: { e: '1', p: '', d: '' } },
    meta: { rulesVersion: '0e20ab44356b', request: { urn, transactionReferenceNumber: reference, merchantName: 'Load Test Store' }, limits: [{ ruleId: 'ecom-hourly-count' }] }
  })
  const journal = new RedisJournal(store.client, store.keys.prefix)
  const [entry] = await journal.byReference(reference)
  t.match(entry, { urn, reference, code: '00', debit: 3119, rulesVersion: '0e20ab44356b', request: { mcc: '5411', customerId: `C-${urn}` }, controls: { ECOM: { enabled: true, perTransactionMax: null, dailyMax: null } } })
  const out = new PassThrough()
  const lines: string[] = []
  out.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n').filter((l) => l !== '')))
  await exportJournal(journal, arrivedAtMs, arrivedAtMs + 1, out, () => {})
  t.same(lines.map((l) => JSON.parse(l)).filter((e) => e.urn === urn), [JSON.parse(JSON.stringify(entry))], 'exported as the journal reads it')
})

t.test('a format-one record: a replay, another attempt taking it over, a conflict', async (t) => {
  const { store, urn, reference, key, arrivedAtMs } = await storeFormatOne(t, 'f1dup')
  t.match(await store.authorize(again(urn, reference, { debitAmount: 1, fingerprint: 'other' })), { code: '05', reason: 'conflict' })
  const later = again(urn, reference, { attempt: 'a-later-attempt', nowMs: arrivedAtMs + 1000 })
  t.match(await store.authorize(later), { code: '00', replayed: true })
  const raw = await store.client.get(key) as string
  t.ok(raw.startsWith('{'), 'written back in its own format')
  t.match(await store.getDecision(urn, reference), { attempt: 'a-later-attempt', attemptArrivedAtMs: arrivedAtMs + 1000, held: '3119' })
  // the first attempt's compensation now changes nothing; the later one's releases
  t.equal(await store.abandon({ ...abandonOf(later), attempt: '4e756278-68a0-46a2-b91e-cba77c2bc2f3', arrivedAtMs }), 'untouched')
  t.equal(await store.abandon(abandonOf(later)), 'released')
  t.equal((await store.getCustomer(urn))?.available, OPENING)
})

function abandonOf (input: AuthorizeInput): Parameters<Store['abandon']>[0] {
  return {
    urn: input.urn, reference: input.reference, attempt: input.attempt, fingerprint: input.fingerprint, limits: [], last4: input.last4,
    arrivedAtMs: input.nowMs, deadlineAtMs: input.deadlineAtMs,
    controls: { defaults: [{ kind: 'ECOM', enabled: true, perTransactionMax: null, dailyMax: null }], day: '20261124' }
  }
}

t.test('a format-one record: its compensation gives back the hold, the window entry and the daily total', async (t) => {
  const { store, urn, reference, attempt, key, limitKey, dailyKey, arrivedAtMs } = await storeFormatOne(t, 'f1abandon')
  const input = again(urn, reference, { attempt, nowMs: arrivedAtMs })
  t.equal(await store.abandon({ ...abandonOf(input), limits: [] }), 'released')
  t.equal((await store.getCustomer(urn))?.available, OPENING)
  t.equal(await store.client.zcard(limitKey), 0, 'out of the window')
  t.equal(await store.client.exists(dailyKey), 0, 'out of the daily total')
  t.ok((await store.client.get(key) as string).startsWith('{'), 'still format one')
  t.match(await store.getDecision(urn, reference), { code: '05', reason: 'deadline', decidedCode: '00', held: '0', released: '3119', answeredOnDeadline: true, limitEntries: [], controlEntries: [] })
  t.equal(await store.abandon(abandonOf(input)), 'untouched', 'once')
})

t.test('a format-one record: a part reversal, then the rest', async (t) => {
  const { store, urn, reference, key, limitKey, dailyKey } = await storeFormatOne(t, 'f1reverse')
  t.match(await store.reverse(urn, reference, 1000), { replayed: false, released: 1000, available: OPENING - DEBIT + 1000 })
  t.same(await store.client.zrange(limitKey, 0, -1), [`2119|${reference}`], 'the window counts what is left')
  t.equal(await store.client.get(dailyKey), '2119')
  t.ok((await store.client.get(key) as string).startsWith('{'), 'still format one')
  t.match(await store.getDecision(urn, reference), { held: '2119', released: '1000', reversal: { amount: '1000' }, limitEntries: [[limitKey, `2119|${reference}`]], controlEntries: [[dailyKey, '2119']] })
  t.match(await store.reverse(urn, reference, 1000), { replayed: true, released: 1000 })
  await t.rejects(store.reverse(urn, reference, null), { code: 'EXTAUTH_ERR_ALREADY_REVERSED' })
})

const odd = { urn: 'U:odd%3A:1', reference: 'R:1%25:x' }

function sample (over: Partial<DecisionRecord> = {}): { key: string, rec: DecisionRecord } {
  const keys = new Keys('p:{x}:')
  const { urn, reference } = odd
  const arrivedAtMs = 1_795_516_000_000
  const rec: DecisionRecord = {
    urn, reference, last4: '43:1', attempt: 'a"1', fingerprint: 'fp', arrivedAtMs, deadlineAtMs: arrivedAtMs + 1200, decidedAtMs: arrivedAtMs + 7,
    code: '00', reason: 'approved', ruleId: null, debit: '500', held: '200', released: '300', shadowLimitHits: ['s1'],
    limitEntries: [[keys.limit(urn, '43:1', { ruleId: 'r:1', per: 'card' }), `200|${reference}`], [keys.limit(urn, '43:1', { ruleId: 'r2', per: 'urn' }), `200|${reference}`]],
    answeredOnDeadline: false, decidedCode: null, reversal: { amount: '300', atMs: arrivedAtMs + 99 },
    meta: {
      rulesVersion: 'v9', shadowHits: [{ ruleId: 'sh', code: '05', mode: 'shadow', values: { mcc: '7995' } }], transactionAmount: '5.00', currencyCode: '978', channel: 'POS',
      request: { urn, customerId: 'C\n1', transactionReferenceNumber: 'not the key', last4Digits: '43:1', transactionAmount: '5.00', extra: 'x' },
      risk: { score: 3 }
    },
    controlEntries: [[keys.controlDaily(urn, '43:1', 'POS', '20261124'), '200']],
    control: null, customerStatus: 'ACTIVE', cardStatus: 'ACTIVE', availableSeen: null, limitSeen: null, controlsSeen: { POS: { e: '1', p: '', d: '900' } },
    attemptArrivedAtMs: arrivedAtMs + 50,
    ...over
  }
  return { key: keys.decision(urn, reference), rec }
}

t.test('the compact format reads back as written, names with separators and escapes included', async (t) => {
  for (const { key, rec } of [
    sample(),
    sample({ meta: null, limitEntries: [], controlEntries: [], reversal: null, shadowLimitHits: [], controlsSeen: null, attemptArrivedAtMs: undefined }),
    sample({ code: '61', reason: 'control_limit', control: { control: 'POS', check: 'dailyMax', limit: 900, totalBefore: 800, debit: 500 }, limitSeen: { ruleId: 'r2', usedBefore: '1', max: '2' }, availableSeen: '7', decidedCode: '61', answeredOnDeadline: true })
  ]) {
    if (rec.attemptArrivedAtMs === undefined) delete rec.attemptArrivedAtMs
    const raw = encodeRecord(key, rec)
    t.notOk(raw.startsWith('{'), 'compact')
    t.same(decodeRecord(key, raw), rec)
    t.same(Object.keys(decodeRecord(key, raw).meta ?? {}), Object.keys(rec.meta ?? {}), 'meta keeps its order')
  }
})

t.test('the Redis store shows a decision as the memory store does', async (t) => {
  const redis = await sharedRedisStore(t)
  const memory = new MemoryStore()
  const urn = urnFor('same:%')
  const limits = [{ ruleId: 'count-1', mode: 'enforce' as const, measure: 'count' as const, per: 'card' as const, windowStartMs: Date.now() - 3_600_000, retainMs: 3_600_000, max: 5, code: '65' as const, values: {} }]
  const controls = { defaults: [{ kind: 'POS' as const, enabled: true, perTransactionMax: null, dailyMax: 100_000 }], day: '20261124' }
  const meta = {
    rulesVersion: 'v2', shadowHits: [], transactionAmount: '250', currencyCode: '356', channel: 'POS',
    request: { customerId: 'C1', urn, merchantName: 'M "quoted"', transactionAmount: '250', transactionReferenceNumber: 'x:1', currencyCode: '356', last4Digits: '4321' },
    limits: [{ ruleId: 'count-1', mode: 'enforce', values: { channel: 'POS' } }]
  }
  for (const s of [redis, memory] as Store[]) {
    await s.putCustomer(urn, {})
    await s.credit(urn, 1000, 'open')
  }
  const cases: AuthorizeInput[] = [
    authInput(urn, { reference: 'x:1', debitAmount: 250, limits, controls, meta }),
    authInput(urn, { reference: 'x:2', debitAmount: 5000, limits, controls, meta }),
    authInput(urn, { reference: 'x:3', debitAmount: 0, limits, controls, meta, fingerprint: 'fp-0' }),
    authInput(urn, { reference: 'x:4', debitAmount: 10, decline: { ruleId: 'r-9', code: '05', mode: 'enforce', values: {} }, meta })
  ]
  for (const input of cases) {
    const [a, b] = [await redis.authorize(input), await memory.authorize(input)]
    t.same(a, b, `${input.reference}: the same answer`)
    const [ra, rb] = [await redis.getDecision(urn, input.reference), await memory.getDecision(urn, input.reference)]
    const strip = (r: DecisionRecord | null): Record<string, unknown> => {
      const { decidedAtMs: _d, expiresAtMs: _e, deadlineAtMs: _dl, limitEntries, controlEntries, ...rest } = r as DecisionRecord
      // the stores name their keys alike but under their own prefixes
      const tail = (k: string): string => k.slice(k.indexOf('}:'))
      return { ...rest, limitEntries: limitEntries.map(([k, m]) => [tail(k), m]), controlEntries: controlEntries.map(([k, m]) => [tail(k), m]) }
    }
    t.same(strip(ra), strip(rb), `${input.reference}: the same record`)
  }
  await redis.reverse(urn, 'x:1', 100)
  await memory.reverse(urn, 'x:1', 100)
  const [ra, rb] = [await redis.getDecision(urn, 'x:1'), await memory.getDecision(urn, 'x:1')]
  t.match(ra, { held: '150', released: '100', limitEntries: [[String, '150|x:1']], controlEntries: [[String, '150']] })
  t.same(ra?.limitEntries.length, rb?.limitEntries.length)
  t.same({ ...ra?.reversal, atMs: 0 }, { ...rb?.reversal, atMs: 0 })
})

t.test('the decision.created event carries the request\'s side: the same event from the memory store, a compact and a format-one Redis store', async (t) => {
  const compact = await sharedRedisStore(t)
  const json = await sharedRedisStore(t, undefined, { recordFormat: 'json' })
  const memory = new MemoryStore()
  const { meta } = sample().rec
  const urn = odd.urn
  const input = authInput(urn, { reference: odd.reference, debitAmount: 500, last4: '43:1', meta: meta as NonNullable<typeof meta> })
  const bodies: Array<Record<string, unknown>> = []
  for (const s of [memory, compact, json]) {
    await s.putCustomer(urn, {})
    await s.credit(urn, 1000, 'open')
    await s.authorize(input)
    const entries = s instanceof MemoryStore
      ? s.outboxEntries(bucketOf(urn)).map((e) => [e.id, e.fields] as const)
      : (await s.client.xrange(s.keys.stream(urn), '-', '+')).map(([id, f]) => [id, pairsToObject(f)] as const)
    const [id, fields] = entries.find(([, f]) => f.t === 'decision.created') ?? t.fail('no decision.created') as never
    if (s === compact) {
      t.ok(fields.x?.startsWith('['), 'compact: the extra data is the record\'s rest')
      t.ok((fields.x ?? '').length < JSON.stringify(meta).length, 'compact: shorter than the meta as JSON')
    } else {
      t.same(JSON.parse(fields.x ?? 'null'), meta, `${s === json ? 'format one' : 'memory'}: the meta as JSON`)
    }
    const { data } = eventBody(bucketOf(urn), id, fields)
    const { decidedAt: _d, ...rest } = data
    bodies.push(rest)
  }
  const m = meta as NonNullable<typeof meta>
  t.match(bodies[0], { urn, reference: odd.reference, last4: '43:1', debit: '500', code: '00', request: m.request, rulesVersion: m.rulesVersion, shadowHits: ['sh'] })
  t.same(bodies[0]?.request, m.request, 'the request as it came')
  t.same(bodies[1], bodies[0], 'compact Redis: the same event')
  t.same(bodies[2], bodies[0], 'format-one Redis: the same event')
})

t.test('DECISION_RECORD_FORMAT=json writes format one, as earlier versions read it', async (t) => {
  const store = await sharedRedisStore(t, undefined, { recordFormat: 'json' })
  const compact = await sharedRedisStore(t)
  const urn = urnFor('json1')
  const limits = [{ ruleId: 'count-1', mode: 'enforce' as const, measure: 'count' as const, per: 'card' as const, windowStartMs: Date.now() - 3_600_000, retainMs: 3_600_000, max: 5, code: '65' as const, values: {} }]
  const controls = { defaults: [{ kind: 'POS' as const, enabled: true, perTransactionMax: null, dailyMax: 100_000 }], day: '20261124' }
  for (const s of [store, compact]) {
    await s.putCustomer(urn, {})
    await s.credit(urn, 1000, 'open')
  }
  const input = authInput(urn, { reference: 'J1', debitAmount: 250, limits, controls })
  await store.authorize(input)
  await compact.authorize(input)
  const raw = await store.client.get(store.keys.decision(urn, 'J1')) as string
  const old = JSON.parse(raw) as Record<string, unknown>
  t.match(old, {
    urn, reference: 'J1', code: '00', held: '250', meta: JSON.stringify(input.meta),
    limitEntries: [[store.keys.limit(urn, '4321', limits[0] as (typeof limits)[0]), '250|J1']],
    controlEntries: [[store.keys.controlDaily(urn, '4321', 'POS', '20261124'), '250']],
    controlsSeen: { POS: { e: '1', p: '', d: '100000' } }
  }, 'the named fields, meta as a JSON string')
  // times of each store's own clock (the deadline is moved by the offset each measures to Redis's clock)
  // are left out
  const strip = (r: DecisionRecord | null): Record<string, unknown> => {
    const { decidedAtMs: _d, expiresAtMs: _e, deadlineAtMs: _l, limitEntries, controlEntries, ...rest } = r as DecisionRecord
    const tail = (k: string): string => k.slice(k.indexOf('}:'))
    return { ...rest, limitEntries: limitEntries.map(([k, m]) => [tail(k), m]), controlEntries: controlEntries.map(([k, m]) => [tail(k), m]) }
  }
  t.same(strip(await store.getDecision(urn, 'J1')), strip(await compact.getDecision(urn, 'J1')), 'reads as the compact record does')
  for (const [name, s] of [['json', store], ['compact', compact]] as const) {
    t.equal((await s.getDecision(urn, 'J1'))?.deadlineAtMs, input.deadlineAtMs + s.clockOffset, `${name}: the deadline on Redis's clock`)
  }
  const late = authInput(urn, { reference: 'J2' })
  t.equal(await store.abandon({ ...abandonOf(late), controls: undefined }), 'tombstoned')
  t.ok((await store.client.get(store.keys.decision(urn, 'J2')) as string).startsWith('{'), 'a tombstone too')
  t.match(await store.reverse(urn, 'J1', 100), { released: 100 })
  t.ok((await store.client.get(store.keys.decision(urn, 'J1')) as string).startsWith('{'), 'kept in its format')
})

storeContract(t, async (t) => await sharedRedisStore(t, undefined, { recordFormat: 'json' }))
