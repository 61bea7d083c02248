// Transfers under store faults: every putLifecycle, debit and credit of a transfer fails once, before or
// after it reached the store, while the platform succeeds, declines, never receives the request or its
// answer cannot be read. Repeating the call as the README says must always end with extauth's balances
// moved exactly as the platform's were.
import t from 'tap'
import { createPrepaidAdapter } from '../../src/adapters/prepaid.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { MemoryStore } from '../../src/store/memory.js'
import { TransferService, type TransferAnswer } from '../../src/lifecycle/transfers.js'
import { listen, PREPAID_CREDS, quietLogger } from '../adapters/fixtures/setup.js'
import { faultyStore, InjectedStoreFault, type FaultyMethod, type StoreFault } from './faulty-store.js'

const AMOUNT = 300
const START = 1000
/** settled: done, declined, or a failure the README says not to repeat */
const settled = (a: TransferAnswer): boolean => a.status === 'TRANSFERRED' || a.status === 'DECLINED' || (a.status === 'FAILED' && a.retryable === false)

async function rig (t: { teardown: (fn: () => unknown) => void }): Promise<{
  sim: ReturnType<typeof buildPrepaidSim>, inner: MemoryStore, faulty: ReturnType<typeof faultyStore>, transfers: TransferService
}> {
  const sim = buildPrepaidSim({ ...PREPAID_CREDS })
  const url = await listen(sim.app)
  const prepaid = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: url, headersTimeoutMs: 2000 }, { logger: quietLogger() })
  t.teardown(async () => { await prepaid.close(); await sim.app.close() })
  const inner = new MemoryStore()
  const faulty = faultyStore(inner)
  return { sim, inner, faulty, transfers: new TransferService(faulty.store, prepaid) }
}

let n = 0

async function pair (r: Awaited<ReturnType<typeof rig>>, platformStart = START): Promise<{ a: string, b: string }> {
  const id = `${process.pid}${++n}`
  const a = `A${id}`
  const b = `B${id}`
  r.sim.wallets.add({ urn: a, customerId: `CA${id}`, accountNumber: `ACC-A${id}`, balance: platformStart })
  r.sim.wallets.add({ urn: b, customerId: `CB${id}`, accountNumber: `ACC-B${id}`, balance: 0 })
  await r.inner.putCustomer(a, {})
  await r.inner.putCustomer(b, {})
  await r.inner.credit(a, START, `seed-${a}`)
  return { a, b }
}

/** Repeats the call as a client would until the transfer is settled; injected faults surface as throws. */
async function settle (r: Awaited<ReturnType<typeof rig>>, req: Parameters<TransferService['transfer']>[0]): Promise<TransferAnswer> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const a = await r.transfers.transfer(req)
      if (settled(a)) return a
    } catch (err) {
      if (!(err instanceof InjectedStoreFault)) throw err
    }
  }
  throw new Error(`transfer ${req.clientTxnId} not settled after 10 calls`)
}

t.test('a hold given back whose record was not saved is not taken for a hold in force', async (t) => {
  const r = await rig(t)
  const { a, b } = await pair(r)
  const req = { clientTxnId: `TX${process.pid}x0`, fromUrn: a, toUrn: b, fromAccountNumber: `ACC-${a}`, toAccountNumber: `ACC-${b}`, amount: AMOUNT }
  // the platform never receives the first attempt, so the hold is given back; the record of that is lost
  r.sim.faults.set('encrypt', { status: 503, times: 1 })
  r.faulty.arm({ method: 'putLifecycle', at: 3, when: 'before' })
  await t.rejects(r.transfers.transfer(req), InjectedStoreFault)
  t.ok(r.faulty.fired())
  const done = await settle(r, req)
  t.equal(done.status, 'TRANSFERRED')
  t.equal((await r.inner.getCustomer(a))?.available, r.sim.wallets.customer(a)?.balance, 'sender as on the platform')
  t.equal((await r.inner.getCustomer(b))?.available, r.sim.wallets.customer(b)?.balance, 'receiver as on the platform')
  t.equal(((await r.inner.getCustomer(a))?.available ?? 0) + ((await r.inner.getCustomer(b))?.available ?? 0), START, 'no money created')
})

type Scenario = 'ok' | 'not-sent' | 'answer-unread' | 'declined'
const SCENARIOS: Scenario[] = ['ok', 'not-sent', 'answer-unread', 'declined']
const METHODS: FaultyMethod[] = ['putLifecycle', 'debit', 'credit']

t.test('every store call of a transfer fails once, in every platform outcome: balances follow the platform', async (t) => {
  const r = await rig(t)
  // every store method fails at least once in every scenario, before and after: the sweep reaches them all
  const reached = new Set<string>()
  for (const scenario of SCENARIOS) {
    for (const method of METHODS) {
      for (const when of ['before', 'after'] as const) {
        for (let at = 1; at <= 6; at++) {
          const fault: StoreFault = { method, at, when }
          // in 'declined' the platform's sender has less than the amount: it answers 6919
          const { a, b } = await pair(r, scenario === 'declined' ? AMOUNT - 1 : START)
          const platformBefore = { a: r.sim.wallets.customer(a)?.balance ?? 0, b: 0 }
          if (scenario === 'not-sent') r.sim.faults.set('encrypt', { status: 503, times: 1 })
          if (scenario === 'answer-unread') r.sim.faults.set('decrypt', { status: 503, times: 1 })
          const sentBefore = r.sim.faults.count('fundTransfer')
          r.faulty.arm(fault)
          const req = { clientTxnId: `TX${a}`, fromUrn: a, toUrn: b, fromAccountNumber: `ACC-${a}`, toAccountNumber: `ACC-${b}`, amount: AMOUNT }
          const label = `${scenario}, ${method} #${at} fails ${when}`
          const done = await settle(r, req)
          r.faulty.disarm()
          r.sim.faults.clear()
          if (r.faulty.fired()) reached.add(`${scenario} ${method} ${when}`)
          const expected = scenario === 'declined' ? 'DECLINED' : 'TRANSFERRED'
          const moved = {
            a: (r.sim.wallets.customer(a)?.balance ?? 0) - platformBefore.a,
            b: (r.sim.wallets.customer(b)?.balance ?? 0) - platformBefore.b
          }
          const here = { a: ((await r.inner.getCustomer(a))?.available ?? 0) - START, b: (await r.inner.getCustomer(b))?.available ?? 0 }
          if (done.status !== expected || here.a !== moved.a || here.b !== moved.b || done.held === true) {
            t.fail(label, { status: done.status, expected, here, moved, held: done.held })
          }
          if (scenario !== 'not-sent' && r.sim.faults.count('fundTransfer') - sentBefore !== 1) {
            t.fail(`${label}: fundTransfer sent ${r.sim.faults.count('fundTransfer') - sentBefore} times`)
          }
        }
      }
    }
  }
  t.equal(reached.size, SCENARIOS.length * METHODS.length * 2, 'each method failed in each scenario')
})
