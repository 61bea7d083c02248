// The stand-in itself: caps that hold under 1,000 concurrent requests for one card; an approval voided by the
// deadline never replayed; the replay oldest first, each reference once, also when the process is killed
// mid-replay and the next one adopts its journal, which then counts the outage's approvals already replayed
// in its caps as the process before it did.
import t from 'tap'
import { Registry } from 'prom-client'
import { MemoryStore } from '../../src/store/memory.js'
import { ERR_STORE_NOT_DONE, ERR_STORE_OUTCOME_UNKNOWN } from '../../src/errors.js'
import { createLogger } from '../../src/logger.js'
import { STANDIN_REPLAY_HORIZON_MS, StandIn, type StandInAbort } from '../../src/standin/stand-in.js'
import { FileStandInJournal, MemoryStandInJournal, type StandInJournal } from '../../src/standin/journal.js'
import { standInMetrics } from '../../src/standin/metrics.js'
import { parsePolicy } from '../../src/standin/policy.js'
import type { AuthorizeInput, Store } from '../../src/store/types.js'
import { authInput } from '../store/contract.js'
import { POLICY, switchedStore, tempDir, withAuthorize } from './helpers.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import { queueStandInNegativeBalance, queueStandInUnconfirmed } from '../../src/settlement/standin-exception.js'
import { resolveException } from '../../src/settlement/resolve.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { until } from '../helpers/wait.js'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const STORE = 'memory|replay:'
const log = createLogger('silent')
/** a request whose 00 is sent as soon as it is decided */
const live: StandInAbort = { aborted: false, done: true, onAbort: () => {} }

function standIn (store: Store, journal: StandInJournal, policy: Record<string, unknown> = {}): StandIn {
  const s = new StandIn({ policy: parsePolicy({ ...POLICY, ...policy }), journal, store, log, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000 })
  return s
}

function input (urn: string, ref: string, debit = 100, last4 = '4321', nowMs = Date.now()): AuthorizeInput {
  return authInput(urn, { reference: ref, debitAmount: debit, last4, nowMs, fingerprint: `fp-${debit}-${last4}` })
}

t.test('1,000 concurrent stand-in requests for one card with a count cap of 7: exactly 7 approved and journaled', async (t) => {
  const dir = tempDir(t)
  const journal = new FileStandInJournal(dir, STORE)
  const s = standIn(new MemoryStore(), journal, { perCard: { count: 7, amount: '100000000' } })
  t.teardown(async () => { await s.stop() })
  const results = await Promise.all(Array.from({ length: 1000 }, async (_, i) => await s.decide(input('UC1', `C${i}`), null, '5411', live)))
  t.equal(results.filter((r) => r.code === '00').length, 7, 'seven approvals')
  t.equal(results.filter((r) => r.check === 'perCard.count').length, 993, 'the rest declined by perCard.count')
  t.match(s.status(), { decisions: { approved: 7, declined: 993 }, amount: '700', replayBacklog: { count: 7, amount: '700' } })
})

t.test('concurrent requests of many cards never pass the instance\'s amount cap', async (t) => {
  const s = standIn(new MemoryStore(), new MemoryStandInJournal(), { perInstance: { amount: '25000' } })
  t.teardown(async () => { await s.stop() })
  const results = await Promise.all(Array.from({ length: 500 }, async (_, i) => await s.decide(input(`UM${i}`, `M${i}`, 1000 + i), null, '5411', live)))
  const approved = results.map((r, i) => (r.code === '00' ? 1000 + i : 0)).reduce((a, b) => a + b, 0)
  t.ok(approved <= 25000, `approved ${approved} ≤ 25000`)
  t.ok(approved > 25000 - 1500, 'and the cap was used up to less than one transaction')
  t.equal(results.filter((r) => r.check === 'perInstance.amount').length, results.filter((r) => r.code !== '00').length)
})

t.test('an approval the deadline answered 05 first is voided: never replayed, its caps given back', async (t) => {
  const store = new MemoryStore()
  await store.putCustomer('UV1', {})
  await store.credit('UV1', 1000, 'seed')
  const s = standIn(store, new MemoryStandInJournal(), { perCard: { count: 1, amount: '1000000' } })
  t.teardown(async () => { await s.stop() })
  let hook: (() => void) | null = null
  const abort = { aborted: false, done: false, onAbort: (fn: (() => void) | null) => { hook = fn } }
  const p = s.decide(input('UV1', 'V1'), null, '5411', abort)
  // the guard answers 05 before the journal write resolves
  abort.aborted = true
  abort.done = true
  ;(hook as unknown as () => void)()
  t.match(await p, { code: '05' })
  t.match(await s.decide(input('UV1', 'V2'), null, '5411', live), { code: '00' }, 'the card\'s one approval is free again')
  await s.replayNow()
  t.equal(await store.getDecision('UV1', 'V1'), null, 'V1 never reached the store')
  t.equal((await store.getCustomer('UV1'))?.available, 900, 'only V2 is debited')
})

t.test('a process killed mid-replay: the next one adopts its journal and each reference is applied once', async (t) => {
  const dir = tempDir(t)
  const inner = new MemoryStore()
  await inner.putCustomer('UK1', {})
  await inner.credit('UK1', 100_000, 'seed')
  const gonePid = spawnSync(process.execPath, ['-e', '']).pid as number
  // the store applies the fourth replay and its reply is lost; then the process dies
  let calls = 0
  const lossy = withAuthorize(inner, async (i, store) => {
    const r = await store.authorize(i)
    if (++calls === 4) throw new ERR_STORE_OUTCOME_UNKNOWN('connection lost')
    return r
  })
  const first = standIn(lossy, new FileStandInJournal(dir, STORE, gonePid))
  const t0 = Date.now() - 10_000
  // written out of order: the replay goes by arrival
  const order = [3, 0, 7, 1, 9, 2, 8, 4, 6, 5]
  for (const k of order) t.match(await first.decide(input('UK1', `K${k}`, 100 + k, `00${k}0`.slice(-4), t0 + k), null, '5411', live), { code: '00' })
  await first.replayNow()
  t.match(first.status(), { replayed: { applied: 3 }, replayBacklog: { count: 7 } }, 'three replayed and marked, the fourth applied but not known to be')
  await first.stop()

  const second = standIn(inner, new FileStandInJournal(dir, STORE, process.pid))
  t.teardown(async () => { await second.stop() })
  t.equal(second.start(), 7, 'the next process adopts the seven not marked done')
  await second.replayNow()
  t.match(second.status(), { replayed: { applied: 6, existing: 1 }, replayBacklog: { count: 0 } })
  const total = order.reduce((sum, k) => sum + 100 + k, 0)
  t.equal((await inner.getCustomer('UK1'))?.available, 100_000 - total, 'every approval debited once')
  const events = (await inner.readDecisionStream('UK1')).filter((e) => e.type === 'decision.created')
  t.same(events.map((e) => e.reference), order.slice().sort((a, b) => a - b).map((k) => `K${k}`), 'replayed oldest first, one event each')
})

t.test('a process restarted mid-replay of an outage that is not over keeps the caps its replayed approvals used', async (t) => {
  const dir = tempDir(t)
  const inner = new MemoryStore()
  await inner.putCustomer('UR1', {})
  await inner.credit('UR1', 100_000, 'seed')
  const sw = switchedStore(inner)
  // the store goes again after the third replay: the outage is not over
  let replays = 0
  const flaky = withAuthorize(sw.store, async (i, store) => {
    const r = await store.authorize(i)
    if (++replays === 3) sw.set('down')
    return r
  })
  const caps = { perCard: { count: 100, amount: '100000000' }, perInstance: { amount: '1000' } }
  const gonePid = spawnSync(process.execPath, ['-e', '']).pid as number
  const first = standIn(flaky, new FileStandInJournal(dir, STORE, gonePid), caps)
  t.ok(first.takes(new ERR_STORE_NOT_DONE('redis is reconnecting')))
  const t0 = Date.now() - 10_000
  for (let k = 0; k < 5; k++) t.match(await first.decide(input('UR1', `R${k}`, 200, '4321', t0 + k), null, '5411', live), { code: '00' })
  t.match(await first.decide(input('UR1', 'R5', 200), null, '5411', live), { code: '05', check: 'perInstance.amount' }, 'the instance cap used up')
  first.storeAnswered()
  await first.replayNow()
  t.match(first.status(), { state: 'active', amount: '1000', replayed: { applied: 3 }, replayBacklog: { count: 2 } }, 'three replayed, then the store went again')
  await first.stop()

  const journal = new FileStandInJournal(dir, STORE, process.pid)
  const second = standIn(flaky, journal, caps)
  t.teardown(async () => { await second.stop() })
  t.equal(second.start(), 2, 'the two not replayed are adopted for replay')
  t.ok(second.takes(new ERR_STORE_NOT_DONE('redis is reconnecting')))
  t.match(second.status(), { amount: '1000', replayBacklog: { count: 2, amount: '400' } }, 'the three replayed still count in this outage')
  t.match(await second.decide(input('UR1', 'R6', 200), null, '5411', live), { code: '05', check: 'perInstance.amount' }, 'so the cap holds across the restart')

  sw.set('up')
  second.storeAnswered()
  await second.replayNow()
  t.match(second.status(), { state: 'standby', sinceMs: null, amount: '0', replayBacklog: { count: 0 } }, 'everything replayed: the outage is over')
  t.equal(readFileSync(journal.path, 'utf8'), '', 'and the journal emptied')
  t.equal((await inner.getCustomer('UR1'))?.available, 100_000 - 1000, 'five approvals debited once')
  t.ok(second.takes(new ERR_STORE_NOT_DONE('redis is reconnecting')))
  t.match(await second.decide(input('UR1', 'R7', 200), null, '5411', live), { code: '00' }, 'a new outage: the caps start again')
})

t.test('an idle instance leaves stand-in once the store answers a ping, without a decision', async (t) => {
  const sw = switchedStore(new MemoryStore())
  const s = new StandIn({ policy: parsePolicy(POLICY), journal: new MemoryStandInJournal(), store: sw.store, log, metrics: standInMetrics(new Registry()), replayEveryMs: 10 })
  t.teardown(async () => { await s.stop() })
  s.start()
  sw.set('down')
  t.ok(s.takes(new ERR_STORE_NOT_DONE('redis is reconnecting')))
  t.equal(s.status().state, 'active')
  sw.set('up')
  for (let i = 0; i < 500 && s.status().state !== 'standby'; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(s.status().state, 'standby', 'left stand-in')
  t.equal(s.status().sinceMs, null, 'and the outage closed')
})

for (const kind of ['memory', 'redis'] as const) {
  t.test(`a replay below zero opens one negative_balance exception in the settlement's queue, also when the queue failed the first time (${kind})`, async (t) => {
    const store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const settlement = settlementFor(store)
    const queue = queueStandInNegativeBalance(settlement)
    await store.putCustomer('UNB1', {})
    await store.credit('UNB1', 50, 'seed')
    let refusals = 1
    const told: unknown[] = []
    const s = new StandIn({
      policy: parsePolicy(POLICY), journal: new MemoryStandInJournal(), store, log, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000,
      onNegativeBalance: (nb) => { told.push(nb) },
      queueNegativeBalance: async (nb) => {
        if (refusals-- > 0) throw new ERR_STORE_NOT_DONE('redis is reconnecting')
        await queue(nb)
      }
    })
    t.teardown(async () => { await s.stop() })
    t.match(await s.decide(input('UNB1', 'NB1', 100), null, '5411', live), { code: '00' })
    await s.replayNow()
    t.equal((await store.getCustomer('UNB1'))?.available, -50, 'replayed below zero')
    t.match(s.status(), { replayBacklog: { count: 1 } }, 'the queue refused it: the entry is not done')
    await s.replayNow()
    t.match(s.status(), { replayBacklog: { count: 0 }, replayed: { applied: 1 } }, 'handed over again, not replayed again')
    t.equal((await store.getCustomer('UNB1'))?.available, -50, 'debited once')
    t.equal(told.length, 1, 'one log line')
    const listed = await settlement.listExceptions({ kind: 'negative_balance', urn: 'UNB1', limit: 10 })
    t.equal(listed.items.length, 1)
    t.match(listed.items[0], { status: 'open', urn: 'UNB1', reference: 'NB1', last4: '4321', amount: '50', accept: { action: 'none', amount: '0' }, detail: /stand-in approval of 100/ })
    await queue({ urn: 'UNB1', reference: 'NB1', last4: '4321', debit: 100, available: -50 })
    t.equal((await settlement.listExceptions({ kind: 'negative_balance', urn: 'UNB1', limit: 10 })).items.length, 1, 'handed over again: still one')
  })
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`a replay below zero whose answer was lost still opens its negative_balance exception; an online decision of the reference opens none (${kind})`, async (t) => {
    const store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const settlement = settlementFor(store)
    const queue = queueStandInNegativeBalance(settlement)
    await store.putCustomer('UNL1', {})
    await store.credit('UNL1', 50, 'seed')
    // ONLINE is decided by the store before the outage; the platform repeats it during the outage
    t.match(await store.authorize(input('UNL1', 'ONLINE', 10)), { code: '00', replayed: false })
    // the first replay of LOST reaches the store and its answer is lost
    let loseNext = true
    const lossy = withAuthorize(store, async (i, inner) => {
      const r = await inner.authorize(i)
      if (i.reference === 'LOST' && loseNext) {
        loseNext = false
        throw new ERR_STORE_OUTCOME_UNKNOWN('connection lost')
      }
      return r
    })
    const told: Array<{ reference: string, available: number }> = []
    const s = new StandIn({
      policy: parsePolicy(POLICY), journal: new MemoryStandInJournal(), store: lossy, log, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000,
      onNegativeBalance: (nb) => { told.push({ reference: nb.reference, available: nb.available }) },
      queueNegativeBalance: queue
    })
    t.teardown(async () => { await s.stop() })
    const t0 = Date.now() - 10_000
    t.match(await s.decide(input('UNL1', 'LOST', 100, '4321', t0), null, '5411', live), { code: '00' })
    t.match(await s.decide(input('UNL1', 'ONLINE', 10, '4321', t0 + 1), null, '5411', live), { code: '00' })
    await s.replayNow()
    t.equal((await store.getCustomer('UNL1'))?.available, -60, 'LOST applied below zero, its answer lost')
    t.same(told, [], 'nothing seen yet')
    await s.replayNow()
    t.match(s.status(), { replayBacklog: { count: 0 }, replayed: { existing: 2 } }, 'both found in the store on the next pass')
    t.equal((await store.getCustomer('UNL1'))?.available, -60, 'nothing debited twice')
    t.same(told, [{ reference: 'LOST', available: -60 }], 'the balance LOST left, told once; ONLINE was not a replay')
    const listed = await settlement.listExceptions({ kind: 'negative_balance', urn: 'UNL1', limit: 10 })
    t.match(listed.items, [{ status: 'open', urn: 'UNL1', reference: 'LOST', amount: '60' }], 'one exception, for LOST')
  })
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`an approval still owed past the store's memory of a decision goes to the exception queue, never replayed again (${kind})`, async (t) => {
    t.equal(STANDIN_REPLAY_HORIZON_MS, 6 * 24 * 3600_000, 'the horizon: a day within the least DECISION_RETENTION_DAYS allows')
    let now = Date.now()
    // decisions kept 300 ms: what 7 days are in production, so the store forgets while the test waits
    const retentionMs = 300
    const store = kind === 'memory' ? new MemoryStore({ clock: () => now, retentionMs }) : await sharedRedisStore(t, undefined, { retentionMs })
    const settlement = settlementFor(store)
    for (const urn of ['UUC1', 'UUC2']) {
      await store.putCustomer(urn, {})
      await store.credit(urn, 1000, 'seed')
    }
    // UC1's first replay reaches the store and its answer is lost; UC2's store calls are refused (never run)
    let loseReply = true
    const lossy = withAuthorize(store, async (i, inner) => {
      if (i.urn === 'UUC2') throw new ERR_STORE_NOT_DONE('connection refused')
      const r = await inner.authorize(i)
      if (loseReply) { loseReply = false; throw new ERR_STORE_OUTCOME_UNKNOWN('no answer') }
      return r
    })
    let queueRefusals = 1
    const queue = queueStandInUnconfirmed(settlement)
    const logged: Array<Record<string, unknown>> = []
    const s = new StandIn({
      policy: parsePolicy(POLICY), journal: new MemoryStandInJournal(), store: lossy, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000,
      log: createLogger('error', { write: (line: string) => { logged.push(JSON.parse(line) as Record<string, unknown>) } }),
      clock: () => now,
      queueUnconfirmed: async (u) => {
        if (queueRefusals-- > 0) throw new ERR_STORE_NOT_DONE('redis is reconnecting')
        await queue(u)
      }
    })
    t.teardown(async () => { await s.stop() })
    const approvedAt = now
    t.match(await s.decide(input('UUC1', 'UC1', 300, '4321', now), null, '5411', live), { code: '00' })
    t.match(await s.decide(input('UUC2', 'UC2', 200, '4321', now), null, '5411', live), { code: '00' })
    await s.replayNow()
    t.equal((await store.getCustomer('UUC1'))?.available, 700, 'UC1\'s replay was debited')
    t.match(s.status(), { replayBacklog: { count: 2 } }, 'its answer lost: both still owed')

    // the store forgets UC1's decision, and the instance's clock passes the horizon
    if (kind === 'memory') now += retentionMs
    await until('the store forgot the decision', async () => await store.getDecision('UUC1', 'UC1') === null, 10_000)
    now += STANDIN_REPLAY_HORIZON_MS
    await s.replayNow()
    t.match(s.status(), { replayBacklog: { count: 2 } }, 'the queue refused the first hand-over: still owed')
    await s.replayNow()
    t.match(s.status(), { replayBacklog: { count: 0 }, replayed: { unconfirmed: 2, applied: 0 } }, 'both handed over, neither replayed')
    t.equal((await store.getCustomer('UUC1'))?.available, 700, 'UC1 debited once')
    t.equal((await store.getCustomer('UUC2'))?.available, 1000, 'UC2 never debited by the replay')
    t.equal(logged.filter((l) => /standin_unconfirmed exception$/.test(String(l.msg))).length, 2, 'one error line each')
    t.match(logged.find((l) => l.reference === 'UC1'), { urn: 'UUC1', debit: '300', approvedAt: new Date(approvedAt).toISOString() })

    const x1 = (await settlement.listExceptions({ kind: 'standin_unconfirmed', urn: 'UUC1', limit: 10 })).items
    const x2 = (await settlement.listExceptions({ kind: 'standin_unconfirmed', urn: 'UUC2', limit: 10 })).items
    t.equal(x1.length, 1)
    t.match(x1[0], { status: 'open', reference: 'UC1', last4: '4321', amount: '300', outcome: 'standin_replay', accept: { action: 'debit', amount: '300' }, detail: /not replayed/ })
    await queue({ urn: 'UUC1', reference: 'UC1', last4: '4321', debit: 300, atMs: now })
    t.equal((await settlement.listExceptions({ kind: 'standin_unconfirmed', urn: 'UUC1', limit: 10 })).items.length, 1, 'handed over again: still one')
    // the operator finds UC1 in the balance (write it off) and UC2 not (accept: debit it)
    await resolveException(store, settlement, x1[0]!.id, { action: 'writeOff', reason: 'the replay was debited on the 3rd' }, 'k1')
    await resolveException(store, settlement, x2[0]!.id, { action: 'accept', reason: 'not in the balance' }, 'k1')
    await resolveException(store, settlement, x2[0]!.id, { action: 'accept', reason: 'not in the balance' }, 'k1')
    t.equal((await store.getCustomer('UUC1'))?.available, 700, 'written off: nothing moved')
    t.equal((await store.getCustomer('UUC2'))?.available, 800, 'accepted: debited once, the repeat moved nothing')
  })
}
