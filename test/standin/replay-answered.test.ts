// The replay against the request's own deadline, on both stores: a stand-in approval is flushed before its 00
// leaves, and its deadline may still answer 05 until the guard lets go of the request. The replay must never
// debit such an approval: it takes only the approvals whose 00 has been sent (or whose process is gone). And a
// stand-in decision reached after the deadline has already answered 05 (the store refused the call only after
// it) is never journaled.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { Registry } from 'prom-client'
import { InFlight } from '../../src/decision/deadline.js'
import { decide } from '../../src/decision/pipeline.js'
import { Compensator } from '../../src/decision/compensator.js'
import { ERR_STORE_NOT_DONE } from '../../src/errors.js'
import { createLogger } from '../../src/logger.js'
import { compileRuleFiles } from '../../src/rules/load.js'
import { StandIn } from '../../src/standin/stand-in.js'
import { FileStandInJournal, outageOf } from '../../src/standin/journal.js'
import { standInMetrics } from '../../src/standin/metrics.js'
import { parsePolicy } from '../../src/standin/policy.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { AuthorizeInput, Store } from '../../src/store/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { authBody } from '../helpers/config.js'
import type { AuthRequest } from '../../src/domain/request.js'
import { authInput } from '../store/contract.js'
import { POLICY, switchedStore, tempDir } from './helpers.js'

const log = createLogger('silent')
const OPENING = 10_000
/** the platform's deadline; the guards below are fired by the test, never by a timer */
const DEADLINE_MS = 2000

type Make = (t: Test) => Promise<Store>

/** A request under its deadline guard: `heard` is what the platform was answered (null: nothing yet). */
function guarded (): { guard: InFlight, heard: () => string | null, answer00: () => void } {
  let heard: string | null = null
  const guard = new InFlight(Date.now() + DEADLINE_MS, () => { heard = '05' })
  // what the route does once the decision answers: the guard lets go, then the 00 is written
  const answer00 = (): void => {
    if (guard.done) return
    guard.release()
    heard = '00'
  }
  return { guard, heard: () => heard, answer00 }
}

function input (urn: string, ref: string, debit: number): AuthorizeInput {
  return authInput(urn, { reference: ref, debitAmount: debit, fingerprint: `fp-${debit}-4321` })
}

function suite (name: string, make: Make): void {
  t.test(`${name}: the deadline answers 05 after the journal's flush, while the replay runs: nothing is debited for it; the 00 sent is debited once`, async (t) => {
    const inner = await make(t)
    const urn = `UA-${name}`
    await inner.putCustomer(urn, {})
    await inner.credit(urn, OPENING, `open-${urn}`)
    const sw = switchedStore(inner)
    const late = guarded()
    // the deadline comes while the replay's call for this reference is in flight, after the store debited
    const store = new Proxy(sw.store, {
      get (target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown
        if (prop !== 'authorize') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
        return async (i: AuthorizeInput) => {
          const r = await target.authorize(i)
          if (i.reference === 'LATE' && !late.guard.done) late.guard.expire()
          return r
        }
      }
    })
    const journal = new FileStandInJournal(tempDir(t), `${name}|answered:`)
    const s = new StandIn({ policy: parsePolicy(POLICY), journal, store, log, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000 })
    t.teardown(async () => { await s.stop() })

    sw.set('down')
    t.ok(s.takes(new ERR_STORE_NOT_DONE('redis is reconnecting')), 'the store cannot be reached: stand-in')
    const sent = guarded()
    t.match(await s.decide(input(urn, 'SENT', 300), null, '5411', sent.guard), { code: '00' }, 'one approval journaled and flushed')
    sent.answer00()
    t.match(await s.decide(input(urn, 'LATE', 200), null, '5411', late.guard), { code: '00' }, 'another journaled and flushed, its 00 not sent yet')
    t.equal(late.heard(), null, 'the guard still holds it')
    const slow = guarded()
    t.match(await s.decide(input(urn, 'SLOW', 50), null, '5411', slow.guard), { code: '00' }, 'a third, whose 00 leaves only after the replay began')

    sw.set('up')
    s.storeAnswered()
    await s.replayNow()
    // the deadline, if the replay did not bring it already
    if (!late.guard.done) late.guard.expire()
    t.match(s.status(), { replayBacklog: { count: 1, amount: '50' } }, 'SLOW waits for its answer')
    slow.answer00()
    await s.replayNow()

    t.equal(sent.heard(), '00')
    t.equal(slow.heard(), '00')
    t.equal(late.heard(), '05', 'the platform heard 05 for LATE')
    t.equal((await inner.getCustomer(urn))?.available, OPENING - 300 - 50, 'only the 00s sent are debited')
    t.match(await inner.getDecision(urn, 'SENT'), { code: '00', held: '300' }, 'SENT is in the books once')
    t.match(await inner.getDecision(urn, 'SLOW'), { code: '00', held: '50' }, 'SLOW too, on the pass after its 00')
    const lateRecord = await inner.getDecision(urn, 'LATE')
    t.ok(lateRecord === null || (lateRecord.code !== '00' && lateRecord.held === '0'), `LATE holds nothing in the store (${JSON.stringify(lateRecord?.code ?? null)})`)
    t.match(s.status(), { replayBacklog: { count: 0 }, replayed: { applied: 2 } }, 'nothing left to replay, two replays applied')
    const lines = readFileSync(journal.path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Parameters<typeof outageOf>[0] extends Iterable<infer L> ? L : never)
    t.same(outageOf(lines).owed, [], 'a process adopting the file replays nothing more')
  })

  t.test(`${name}: the store refuses the call only after the deadline answered 05: no stand-in approval is journaled`, async (t) => {
    const inner = await make(t)
    const urn = `UB-${name}`
    await inner.putCustomer(urn, {})
    await inner.credit(urn, OPENING, `open-${urn}`)
    const sw = switchedStore(inner)
    const req = guarded()
    let refusals = 1
    // a slow store whose reply, after the deadline, is a refusal before anything ran (READONLY after a failover)
    const store = new Proxy(sw.store, {
      get (target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown
        if (prop !== 'authorize') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
        return async (i: AuthorizeInput) => {
          if (refusals-- > 0) {
            req.guard.expire()
            throw new ERR_STORE_NOT_DONE('READONLY You can\'t write against a read only replica.')
          }
          return await target.authorize(i)
        }
      }
    })
    const journal = new FileStandInJournal(tempDir(t), `${name}|refused:`)
    const s = new StandIn({ policy: parsePolicy(POLICY), journal, store, log, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000 })
    const compensator = new Compensator(store, log)
    t.teardown(async () => {
      await compensator.drain(1000)
      await s.stop()
    })
    const rules = compileRuleFiles([], { timezone: 'UTC' })
    if (!rules.ok) throw new Error('rules refused')
    const body = authBody({ urn, transactionReferenceNumber: 'REFUSED', transactionAmount: '250', channel: 'POS', mcc: '5411' }) as unknown as AuthRequest
    const arrivedAtMs = Date.now()
    const d = await decide(body, { arrivedAtMs, deadlineAtMs: arrivedAtMs + DEADLINE_MS, abort: req.guard }, { store, rules: () => rules.set, timezone: 'UTC', standIn: s, compensator })
    t.equal(req.heard(), '05', 'the deadline answered 05')
    t.not(d.code, '00', `the decision behind it is no approval (${d.code})`)
    t.match(s.status(), { replayBacklog: { count: 0 }, amount: '0' }, 'nothing journaled, no cap used')
    await s.replayNow()
    for (let i = 0; i < 100 && compensator.pending > 0; i++) await new Promise((resolve) => setImmediate(resolve))
    t.equal((await inner.getCustomer(urn))?.available, OPENING, 'nothing debited')
    const lines = readFileSync(journal.path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Parameters<typeof outageOf>[0] extends Iterable<infer L> ? L : never)
    t.same(outageOf(lines).owed, [], 'a process adopting the file replays nothing')
  })
}

suite('memory', async () => new MemoryStore())
suite('redis', async (t) => await sharedRedisStore(t))
