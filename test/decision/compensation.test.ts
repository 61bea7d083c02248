// Deadline compensation under faults: a store error is read by its type, never its text (a failed call that
// may have committed is undone); the guard hands the undo to the store before it answers 05; and a process
// killed before the store took the undo leaves it, journaled, to the next start.
import t from 'tap'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { MemoryStore } from '../../src/store/memory.js'
import type { AbandonInput, AbandonOutcome, AuthorizeInput, AuthorizeResult, Store } from '../../src/store/types.js'
import { decide, type DecisionDeps } from '../../src/decision/pipeline.js'
import { Compensator } from '../../src/decision/compensator.js'
import { DeadlineGuard, InFlight } from '../../src/decision/deadline.js'
import { manualClock } from '../helpers/manual-clock.js'
import { FileCompensationJournal } from '../../src/decision/compensation-journal.js'
import { ERR_STORE_NOT_DONE, ERR_STORE_OUTCOME_UNKNOWN } from '../../src/errors.js'
import { emptyRuleSet } from '../../src/rules/manager.js'
import { request } from '../rules/helpers.js'
import { Registry } from 'prom-client'
import { StandIn } from '../../src/standin/stand-in.js'
import { MemoryStandInJournal } from '../../src/standin/journal.js'
import { standInMetrics } from '../../src/standin/metrics.js'
import { parsePolicy } from '../../src/standin/policy.js'
import { POLICY } from '../standin/helpers.js'

const silent = pino({ level: 'silent' })
/** ioredis's words for "never written": the pipeline must not read them */
const IOREDIS_OFFLINE_TEXT = "Stream isn't writeable and enableOfflineQueue options is false"

/** A store whose authorize commits and then fails, or fails without committing, with the error given. */
function failingAfter (inner: Store, mode: 'commit-then-fail' | 'fail', err: () => Error): Store {
  return new Proxy(inner, {
    get (target, prop, receiver) {
      if (prop === 'authorize') {
        return async (input: AuthorizeInput): Promise<AuthorizeResult> => {
          if (mode === 'commit-then-fail') await target.authorize(input)
          throw err()
        }
      }
      const v = Reflect.get(target, prop, receiver) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    }
  })
}

async function funded (store: Store, urn: string, amount: number): Promise<void> {
  await store.putCustomer(urn, {})
  await store.credit(urn, amount, `seed-${urn}`)
}

function deps (store: Store, compensator: Compensator): DecisionDeps {
  return { store, rules: () => emptyRuleSet(), timezone: 'UTC', compensator }
}

async function settle (c: Compensator): Promise<void> {
  for (let i = 0; i < 200 && c.pending > 0; i++) await new Promise((resolve) => setImmediate(resolve))
}

t.test('a reply lost after the commit is undone, whatever the error text says', async (t) => {
  const inner = new MemoryStore()
  await funded(inner, 'U-lost', 1000)
  // typed "outcome unknown", worded like ioredis's "never sent": the text must not decide
  const store = failingAfter(inner, 'commit-then-fail', () => new ERR_STORE_OUTCOME_UNKNOWN(IOREDIS_OFFLINE_TEXT))
  const compensator = new Compensator(inner, silent)
  const now = Date.now()
  await t.rejects(decide(request({ urn: 'U-lost', transactionReferenceNumber: 'R1', transactionAmount: '300' }),
    { arrivedAtMs: now, deadlineAtMs: now + 1000, abort: new InFlight(now + 1000) }, deps(store, compensator)))
  await settle(compensator)
  t.equal((await inner.getCustomer('U-lost'))?.available, 1000, 'the hold of the lost reply is given back')
  t.match(await inner.getDecision('U-lost', 'R1'), { code: '05', held: '0', answeredOnDeadline: true })
})

t.test('a store that surely did nothing leaves nothing to undo (no tombstone for the retry)', async (t) => {
  const inner = new MemoryStore()
  await funded(inner, 'U-down', 1000)
  const store = failingAfter(inner, 'fail', () => new ERR_STORE_NOT_DONE('redis is reconnecting'))
  const compensator = new Compensator(inner, silent)
  const now = Date.now()
  await t.rejects(decide(request({ urn: 'U-down', transactionReferenceNumber: 'R2' }),
    { arrivedAtMs: now, deadlineAtMs: now + 1000, abort: new InFlight(now + 1000) }, deps(store, compensator)))
  await settle(compensator)
  t.equal(compensator.pending, 0)
  t.equal(await inner.getDecision('U-down', 'R2'), null, 'the platform\'s retry is decided afresh')
})

/** A store whose authorize commits but whose reply never comes, and whose abandon is recorded, then stalls. */
function stalled (inner: Store, seen: string[]): Store {
  return new Proxy(inner, {
    get (target, prop, receiver) {
      if (prop === 'authorize') {
        return async (input: AuthorizeInput): Promise<AuthorizeResult> => {
          await target.authorize(input)
          seen.push('authorize committed')
          return await new Promise<AuthorizeResult>(() => {})
        }
      }
      if (prop === 'abandon') {
        return async (_input: AbandonInput): Promise<AbandonOutcome> => {
          seen.push('abandon sent')
          return await new Promise<AbandonOutcome>(() => {})
        }
      }
      const v = Reflect.get(target, prop, receiver) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    }
  })
}

t.test('killed after answering 05 on the deadline, before the store took the undo: the next start undoes it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-journal-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const shared = new MemoryStore() // the store outlives the process; everything else dies with it
  await funded(shared, 'U-kill', 1000)
  const seen: string[] = []
  const deadPid = 2 ** 22 + 12345 // above Linux's pid_max: surely not a live process
  const now = Date.now()
  const clock = manualClock(now)
  {
    const store = stalled(shared, seen)
    const compensator = new Compensator(store, silent, undefined, { journal: new FileCompensationJournal(dir, 'test-store', deadPid), timers: clock.timers })
    const guard = new DeadlineGuard(clock)
    // as the endpoint does: the 05 is written by the guard's deadline callback
    const f = guard.start(now + 1000, () => { seen.push('answered 05') })
    void decide(request({ urn: 'U-kill', transactionReferenceNumber: 'R3', transactionAmount: '400' }),
      { arrivedAtMs: now, deadlineAtMs: now + 1000, abort: f }, deps(store, compensator))
    while (!seen.includes('authorize committed')) await new Promise((resolve) => setImmediate(resolve))
    clock.advanceTo(now + 999)
    t.same(seen, ['authorize committed'], 'nothing is answered before the deadline')
    clock.advanceTo(now + 1000)
    t.same(seen, ['authorize committed', 'abandon sent', 'answered 05'], 'the undo is handed to the store before the 05 is written')
    t.equal(guard.finish(f), false, 'a late result of the decision would be dropped')
    t.equal((await shared.getCustomer('U-kill'))?.available, 600, 'the store still holds the amount: the undo never arrived')
    // the process is killed here: its compensator, timers and pending promises are gone
  }
  t.equal((await readdir(dir)).length, 1, 'the pending undo is in the journal')
  const compensator = new Compensator(shared, silent, undefined, { journal: new FileCompensationJournal(dir, 'test-store') })
  t.equal(compensator.recover(), 1, 'the next start finds it')
  await settle(compensator)
  t.equal((await shared.getCustomer('U-kill'))?.available, 1000, 'no hold survives an answer of 05')
  t.match(await shared.getDecision('U-kill', 'R3'), { code: '05', answeredOnDeadline: true })
  const again = new Compensator(shared, silent, undefined, { journal: new FileCompensationJournal(dir, 'test-store') })
  t.equal(again.recover(), 0, 'once taken, it is not sent again')
})

t.test('journals of other stores, and of live processes, are left alone', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-journal-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const input = { urn: 'U', reference: 'R', attempt: 'a', fingerprint: 'f', limits: [], last4: '1234', arrivedAtMs: 1, deadlineAtMs: 2 }
  new FileCompensationJournal(dir, 'store-a', 2 ** 22 + 1).add('x', input)
  new FileCompensationJournal(dir, 'store-b', process.ppid).add('y', input)
  t.same(new FileCompensationJournal(dir, 'store-b').pending(), [], 'a live process keeps its own')
  t.same(new FileCompensationJournal(dir, 'store-c').pending(), [], 'another store\'s are not taken')
  t.same(new FileCompensationJournal(dir, 'store-a').pending().map((p) => p.id), ['x'], 'a dead process of the same store is adopted')
})

t.test('a repeat answered 05 because the store did not run it releases the earlier attempt\'s hold', async (t) => {
  const inner = new MemoryStore()
  await funded(inner, 'U-rep', 1000)
  const compensator = new Compensator(inner, silent)
  const req = request({ urn: 'U-rep', transactionReferenceNumber: 'R5', transactionAmount: '250' })
  const first = Date.now()
  const d = await decide(req, { arrivedAtMs: first, deadlineAtMs: first + 1000, abort: new InFlight(first + 1000) }, deps(inner, compensator))
  t.equal(d.code, '00', 'the first attempt is approved; its answer is lost on the way to the platform')
  const down = failingAfter(inner, 'fail', () => new ERR_STORE_NOT_DONE('redis is reconnecting'))
  await t.rejects(decide(req, { arrivedAtMs: first + 2000, deadlineAtMs: first + 3000, abort: new InFlight(first + 3000) }, deps(down, compensator)),
    'the platform\'s repeat meets a store that is down: answered 05')
  await settle(compensator)
  t.equal((await inner.getCustomer('U-rep'))?.available, 1000, 'no hold survives the 05 the platform heard last')
  t.match(await inner.getDecision('U-rep', 'R5'), { code: '05', answeredOnDeadline: true })
})

t.test('a repeat stand-in answers 05 as a conflict leaves the earlier attempt\'s approval held, while a stand-in decline releases it', async (t) => {
  const inner = new MemoryStore()
  await funded(inner, 'U-sc', 1000)
  const compensator = new Compensator(inner, silent)
  const down = failingAfter(inner, 'fail', () => new ERR_STORE_NOT_DONE('redis is reconnecting'))
  const standIn = new StandIn({ policy: parsePolicy(POLICY), journal: new MemoryStandInJournal(), store: down, log: silent, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000 })
  t.teardown(async () => { await standIn.stop() })
  const at = Date.now()
  const ctx = (arrivedAtMs: number): { arrivedAtMs: number, deadlineAtMs: number, abort: InFlight } =>
    ({ arrivedAtMs, deadlineAtMs: arrivedAtMs + 1000, abort: new InFlight(arrivedAtMs + 1000) })
  const online = (over: Parameters<typeof request>[0]): ReturnType<typeof request> => request({ urn: 'U-sc', channel: 'POS', mcc: '5411', ...over })

  t.match(await decide(online({ transactionReferenceNumber: 'R6', transactionAmount: '250' }), ctx(at), deps(inner, compensator)), { code: '00' },
    'approved online: the platform hears 00')
  const outage = { ...deps(down, compensator), standIn }
  t.match(await decide(online({ transactionReferenceNumber: 'R6', transactionAmount: '251' }), ctx(at + 2000), outage), { code: '00', standIn: true },
    'in an outage the reference with another amount is approved in stand-in (it cannot read the store)')
  t.match(await decide(online({ transactionReferenceNumber: 'R6', transactionAmount: '250' }), ctx(at + 2001), outage), { code: '05', reason: 'conflict', standIn: true },
    'the first amount again: a conflict with the stand-in\'s journal')
  await settle(compensator)
  t.match(await inner.getDecision('U-sc', 'R6'), { code: '00', held: '250', released: '0' }, 'a conflict is not about the first decision: it stands')
  t.equal((await inner.getCustomer('U-sc'))?.available, 750, 'its hold is kept')

  // a stand-in decline of a repeat of the same amount and card is a decision the platform acts on
  t.match(await decide(online({ transactionReferenceNumber: 'R7', transactionAmount: '300' }), ctx(at + 3000), deps(inner, compensator)), { code: '00' })
  t.match(await decide(online({ transactionReferenceNumber: 'R7', transactionAmount: '300', channel: 'ATM' }), ctx(at + 4000), outage), { code: '05', reason: 'standin_declined' },
    'the repeat meets a channel the policy disables: declined in stand-in')
  await settle(compensator)
  t.match(await inner.getDecision('U-sc', 'R7'), { code: '05', held: '0', answeredOnDeadline: true }, 'no hold survives the 05 the platform heard last')
  t.equal((await inner.getCustomer('U-sc'))?.available, 750)
})
