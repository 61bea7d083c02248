// The rig of the held-move fault sweeps (held-move-faults.test.ts on the embedded store, and
// held-move-faults-redis.test.ts on Redis, a file of its own so that each sweep has tap's whole time for a file):
// transfers and unloads under store faults, every putLifecycle, debit and credit failing once, before or after
// it reached the store, while the platform succeeds, declines, never receives the request or its answer cannot
// be read. Repeating the call as the README says must always end with extauth's balances moved exactly as the
// platform's were.
import t from 'tap'
import { createPrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { TransferService, type TransferAnswer } from '../../src/moves/transfers.js'
import { UnloadService, type UnloadAnswer } from '../../src/moves/unloads.js'
import { listen, PREPAID_CREDS, quietLogger } from '../adapters/fixtures/setup.js'
import { faultyStore, InjectedStoreFault, type FaultyMethod, type StoreFault } from './faulty-store.js'

export const AMOUNT = 300
export const START = 1000
/** settled: done, declined, or a failure the README says not to repeat */
const settled = (a: TransferAnswer | UnloadAnswer): boolean =>
  a.status === 'TRANSFERRED' || a.status === 'UNLOADED' || a.status === 'DECLINED' || (a.status === 'FAILED' && a.retryable === false)

export type StoreKind = 'memory' | 'redis'

export async function rig (t: { teardown: (fn: () => unknown) => void }, kind: StoreKind = 'memory'): Promise<{
  sim: ReturnType<typeof buildPrepaidSim>, inner: Store, faulty: ReturnType<typeof faultyStore>, transfers: TransferService, unloads: UnloadService, refuse: Set<string>
}> {
  const refuse = new Set<string>()
  // a clientTxnId in `refuse` is declined by the platform with 7948 (it runs no other check first)
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, unloadPath: '/test/unload', refusal: (_call, req) => refuse.has(String(req.clientTxnId)) ? '7948' : undefined })
  const url = await listen(sim.app)
  const prepaid = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: url, headersTimeoutMs: 2000, unloadPath: '/test/unload' }, { logger: quietLogger() })
  t.teardown(async () => { await prepaid.close(); await sim.app.close() })
  const inner: Store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
  const faulty = faultyStore(inner)
  return { sim, inner, faulty, transfers: new TransferService(faulty.store, prepaid), unloads: new UnloadService(faulty.store, prepaid), refuse }
}

let n = 0

export async function pair (r: Awaited<ReturnType<typeof rig>>, platformStart = START): Promise<{ a: string, b: string }> {
  const id = `${process.pid}${++n}`
  const a = `A${id}`
  const b = `B${id}`
  r.sim.wallets.add({ urn: a, customerId: `CA${id}`, accountNumber: `ACC-A${id}`, balance: platformStart })
  r.sim.wallets.add({ urn: b, customerId: `CB${id}`, accountNumber: `ACC-B${id}`, balance: 0 })
  await r.inner.putCustomer(a, { customerId: `CA${id}` })
  await r.inner.putCustomer(b, {})
  await r.inner.credit(a, START, `seed-${a}`)
  return { a, b }
}

/** Repeats the call as a client would until it is settled; injected faults surface as throws. */
async function settleWith<A extends TransferAnswer | UnloadAnswer> (id: string, call: () => Promise<A>): Promise<A> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const a = await call()
      if (settled(a)) return a
    } catch (err) {
      if (!(err instanceof InjectedStoreFault)) throw err
    }
  }
  throw new Error(`${id} not settled after 10 calls`)
}

export async function settle (r: Awaited<ReturnType<typeof rig>>, req: Parameters<TransferService['transfer']>[0]): Promise<TransferAnswer> {
  return await settleWith(req.clientTxnId, async () => await r.transfers.transfer(req))
}

type Scenario = 'ok' | 'not-sent' | 'answer-unread' | 'declined'
const SCENARIOS: Scenario[] = ['ok', 'not-sent', 'answer-unread', 'declined']
const METHODS: FaultyMethod[] = ['putLifecycle', 'debit', 'credit']

/** Registers the two sweeps (transfers, unloads) on one store. */
export function faultSweeps (kind: StoreKind): void {
  t.test(`${kind}: every store call of a transfer fails once, in every platform outcome: balances follow the platform`, async (t) => {
    const r = await rig(t, kind)
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

  t.test(`${kind}: every store call of an unload fails once, in every platform outcome: the balance follows the platform`, async (t) => {
    const r = await rig(t, kind)
    const reached = new Set<string>()
    const FEE = 7
    for (const scenario of SCENARIOS) {
      for (const method of [...METHODS, 'recordCompletion'] as FaultyMethod[]) {
        for (const when of ['before', 'after'] as const) {
          for (let at = 1; at <= 6; at++) {
            const { a } = await pair(r)
            const req = {
              clientTxnId: `UL${a}`, urn: a, accountNumber: `ACC-${a}`, amount: AMOUNT, fee: FEE, receiver: 'R', sourceType: 1,
              fundFlowType: 'UNLOAD', implId: 'I', implType: 'T', beneficiaryId: 1
            }
            if (scenario === 'declined') r.refuse.add(req.clientTxnId)
            if (scenario === 'not-sent') r.sim.faults.set('encrypt', { status: 503, times: 1 })
            if (scenario === 'answer-unread') r.sim.faults.set('decrypt', { status: 503, times: 1 })
            const sentBefore = r.sim.faults.count('unload')
            r.faulty.arm({ method, at, when })
            const label = `${scenario}, ${method} #${at} fails ${when}`
            const done = await settleWith(req.clientTxnId, async () => await r.unloads.unload(req))
            r.faulty.disarm()
            r.sim.faults.clear()
            if (r.faulty.fired()) reached.add(`${scenario} ${method} ${when}`)
            const expected = scenario === 'declined' ? 'DECLINED' : 'UNLOADED'
            const moved = (r.sim.wallets.customer(a)?.balance ?? 0) - START
            const here = ((await r.inner.getCustomer(a))?.available ?? 0) - START
            if (done.status !== expected || here !== moved || done.held === true || (expected === 'UNLOADED' && moved !== -(AMOUNT + FEE))) {
              t.fail(label, { status: done.status, expected, here, moved, held: done.held })
            }
            if (scenario !== 'not-sent' && r.sim.faults.count('unload') - sentBefore !== 1) {
              t.fail(`${label}: the unload sent ${r.sim.faults.count('unload') - sentBefore} times`)
            }
            // the completion's event, once, with the unload's values; none for an unload that did not happen
            const completed = (await r.inner.readDecisionStream(a)).filter((e) => e.urn === a && e.type === 'unload.completed')
            const want = expected === 'UNLOADED' ? [{ clientTxnId: req.clientTxnId, amount: String(AMOUNT), fee: String(FEE) }] : []
            if (JSON.stringify(completed.map((e) => ({ clientTxnId: e.clientTxnId, amount: e.amount, fee: e.fee }))) !== JSON.stringify(want)) {
              t.fail(`${label}: unload.completed events`, { completed, want })
            }
          }
        }
      }
    }
    // an unload credits only to give a hold back: in 'ok' and 'answer-unread' there is no credit to fail;
    // a declined unload records no completion
    t.equal(reached.size, SCENARIOS.length * (METHODS.length + 1) * 2 - 4 - 2, 'each method failed in each scenario where it is called')
  })
}
