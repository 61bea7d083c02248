// A card-lifecycle record that is not final (money held or moved but not settled, or a party that may have
// acted) is never forgotten: left untouched past the 30-day lifetime of records, the repeat or resume finds
// it and never takes, or fails to give, the money a second time. Settled records still expire. Each face on
// both stores; time is driven by the services' clock and, on Redis, by ageing the prefix's keys' ttls.
import t, { type Test } from 'tap'
import { createPrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import type { GatewayAdapter } from '../../src/adapters/gateway/adapter.js'
import { parseTxnAnswer } from '../../src/adapters/gateway/parse.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { MemoryStore } from '../../src/store/memory.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { LIFECYCLE_TTL_SECONDS, type Store } from '../../src/store/types.js'
import { LoadService } from '../../src/moves/loads.js'
import { TransferService } from '../../src/moves/transfers.js'
import { UnloadService } from '../../src/moves/unloads.js'
import { deleteByPrefix, SHARED_REDIS_URL, uniquePrefix } from '../helpers/redis.js'
import { listen, PREPAID_CREDS, quietLogger } from '../adapters/fixtures/setup.js'
import { faultyStore, InjectedStoreFault, type StoreFault } from './faulty-store.js'

const DAY_MS = 24 * 3600_000
/** a day past the records' lifetime */
const PAST_LIFETIME_MS = LIFECYCLE_TTL_SECONDS * 1000 + DAY_MS
const START = 1000
const AMOUNT = 300
const FEE = 7

interface Teardown { teardown: (fn: () => unknown) => void }
type Kind = 'memory' | 'redis'

/** A store whose time can pass: the memory store's clock; on Redis, every key of the prefix ages by `ms`. */
async function storeWithTime (t: Teardown, kind: Kind, clock: { now: number }): Promise<{ store: Store, pass: (ms: number) => Promise<void> }> {
  if (kind === 'memory') {
    return { store: new MemoryStore({ clock: () => clock.now }), pass: async (ms) => { clock.now += ms } }
  }
  const prefix = uniquePrefix()
  const store = new RedisStore(createRedisClient({ url: SHARED_REDIS_URL }), { prefix })
  await store.connect()
  t.teardown(async () => { await store.close(); await deleteByPrefix(SHARED_REDIS_URL, prefix) })
  const pass = async (ms: number): Promise<void> => {
    clock.now += ms
    for (const key of await store.client.keys(`${prefix}*`)) {
      const ttl = await store.client.pttl(key)
      if (ttl < 0) continue
      if (ttl <= ms) await store.client.del(key)
      else await store.client.pexpire(key, ttl - ms)
    }
  }
  return { store, pass }
}

async function prepaidRig (t: Teardown, kind: Kind): Promise<{
  sim: ReturnType<typeof buildPrepaidSim>, store: Store, faulty: ReturnType<typeof faultyStore>, pass: (ms: number) => Promise<void>, transfers: TransferService, unloads: UnloadService
}> {
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, unloadPath: '/test/unload' })
  const url = await listen(sim.app)
  const prepaid = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: url, headersTimeoutMs: 2000, unloadPath: '/test/unload' }, { logger: quietLogger() })
  t.teardown(async () => { await prepaid.close(); await sim.app.close() })
  const clock = { now: Date.UTC(2026, 0, 1) }
  const { store, pass } = await storeWithTime(t, kind, clock)
  const faulty = faultyStore(store)
  for (const [urn, balance] of [['A', START], ['B', 0]] as const) {
    sim.wallets.add({ urn, customerId: `C${urn}`, accountNumber: `ACC-${urn}`, balance })
    await store.putCustomer(urn, { customerId: `C${urn}` })
    if (balance > 0) await store.credit(urn, balance, `seed-${urn}`)
  }
  const now = (): number => clock.now
  return { sim, store, faulty, pass, transfers: new TransferService(faulty.store, prepaid, now), unloads: new UnloadService(faulty.store, prepaid, now) }
}

/** A transfer the platform moved, stopped by `fault` while AUTHORIZED, then left untouched past the records' lifetime. */
async function movedThenUntouched (t: Test, kind: Kind, fault: StoreFault, completing: boolean): Promise<{ r: Awaited<ReturnType<typeof prepaidRig>>, req: Parameters<TransferService['transfer']>[0] }> {
  const r = await prepaidRig(t, kind)
  const req = { clientTxnId: 'TR1', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: AMOUNT }
  r.faulty.arm(fault)
  await t.rejects(r.transfers.transfer(req), InjectedStoreFault)
  t.match(await r.store.getLifecycle('transfer', 'TR1'), { status: 'AUTHORIZED', completing, hold: { state: 'held' } })
  await r.pass(PAST_LIFETIME_MS)
  return { r, req }
}

const available = async (store: Store, urn: string): Promise<number | undefined> => (await store.getCustomer(urn))?.available

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: an unload held and stopped before its send, untouched past 30 days: the repeat sends it under the same hold`, async (t) => {
    const r = await prepaidRig(t, kind)
    const req = { clientTxnId: 'UL1', urn: 'A', accountNumber: 'ACC-A', amount: AMOUNT, fee: FEE, receiver: 'R', sourceType: 1, fundFlowType: 'UNLOAD', implId: 'I', implType: 'T', beneficiaryId: 1 }
    // saves: the record, `taking`, `held`, then the send's count: the process stops there, the amount held
    r.faulty.arm({ method: 'putLifecycle', at: 4, when: 'before' })
    await t.rejects(r.unloads.unload(req), InjectedStoreFault)
    t.equal(await available(r.store, 'A'), START - AMOUNT - FEE, 'held')
    t.equal(r.sim.faults.count('unload'), 0, 'nothing sent')
    await r.pass(PAST_LIFETIME_MS)
    t.match(await r.store.getLifecycle('unload', 'UL1'), { status: 'PENDING', hold: { state: 'held' } }, 'the record with money held is kept')
    t.match(await r.unloads.unload(req), { status: 'UNLOADED' })
    t.equal(r.sim.faults.count('unload'), 1, 'sent once')
    t.equal(r.sim.wallets.customer('A')?.balance, START - AMOUNT - FEE, 'the platform unloaded once')
    t.equal(await available(r.store, 'A'), START - AMOUNT - FEE, 'the customer is debited once, as on the platform')
    // settled, the record now lives out its lifetime
    await r.pass(PAST_LIFETIME_MS)
    t.equal(await r.store.getLifecycle('unload', 'UL1'), null, 'a settled record expires')
  })

  t.test(`${kind}: a transfer the platform moved, its receiver not credited, untouched past 30 days: the repeat credits it once`, async (t) => {
    // the platform moves it; the save that begins the store's steps after it is lost: the record stays AUTHORIZED
    const { r, req } = await movedThenUntouched(t, kind, { method: 'putLifecycle', at: 7, when: 'before' }, false)
    t.match(await r.transfers.transfer(req), { status: 'TRANSFERRED' }, 'the receiver\'s credit never began: it is made')
    t.equal(r.sim.faults.count('fundTransfer'), 1, 'the platform is not asked again')
    t.equal(await available(r.store, 'A'), START - AMOUNT, 'the sender is debited once')
    t.equal(await available(r.store, 'B'), AMOUNT, 'the receiver is credited once')
  })

  t.test(`${kind}: a transfer whose receiver's credit may have been made, untouched past 30 days: never made twice, left to an operator`, async (t) => {
    // the receiver's credit (the call's only credit) is made, its reply lost: the record says it began
    const { r, req } = await movedThenUntouched(t, kind, { method: 'credit', at: 1, when: 'after' }, true)
    const again = await r.transfers.transfer(req)
    // the credit's reference is past the store's retention: whether it was made cannot be known here
    t.match(again, { status: 'FAILED', retryable: false, held: true })
    t.type(again.reconcile, 'string', 'an operator is told to settle it')
    t.equal(r.sim.faults.count('fundTransfer'), 1, 'the platform is not asked again')
    t.equal(await available(r.store, 'A'), START - AMOUNT, 'the sender is debited once')
    t.equal(await available(r.store, 'B'), AMOUNT, 'the receiver is not credited twice')
    await r.pass(PAST_LIFETIME_MS)
    t.match(await r.store.getLifecycle('transfer', 'TR1'), { status: 'FAILED' }, 'kept for the operator')
    t.match(await r.transfers.transfer(req), { status: 'FAILED', reconcile: again.reconcile })
    t.equal(await available(r.store, 'A'), START - AMOUNT, 'a repeat after that takes nothing either')
  })

  for (const when of ['before', 'after'] as const) {
    t.test(`${kind}: a load charged, its credit ${when === 'before' ? 'never made' : 'made with its reply lost'}, untouched past 30 days: the resume finds it, credited once`, async (t) => {
      const clock = { now: Date.UTC(2026, 0, 1) }
      const { store, pass } = await storeWithTime(t, kind, clock)
      await store.putCustomer('U1', {})
      let authorized = 0
      const gateway = {
        generateOtp: async () => ({ kind: 'ok', pgTransactionId: 'PG1' }),
        verifyOtp: async () => ({ kind: 'ok' }),
        authorize: async () => {
          authorized++
          return authorized === 1 ? parseTxnAnswer({ status: '50020', transactionId: 'PG1' }) : parseTxnAnswer({ status: '50021', pgErrorCode: '96', pgErrorDetail: 'PREVIOUSLY AUTHORIZED', transactionId: 'PG1' })
        }
      } as unknown as GatewayAdapter
      const faulty = faultyStore(store)
      const loads = new LoadService(faulty.store, gateway, () => clock.now)
      await loads.start({ urn: 'U1', amount: 500, merchantReferenceNo: 'M1', pan: '4111111111111111', expDate: '122030', cvd2: '123', currencyCode: '356', nameOnCard: 'A', mobileNumber: '919800000001' } as never)
      // charged (AUTHORIZED recorded): 'before', the process stops before the credit begins (verify saves
      // OTP_VERIFIED, the authorize count, AUTHORIZED, then that the credit begins); 'after', the credit is
      // made and its reply lost
      faulty.arm(when === 'before' ? { method: 'putLifecycle', at: 4, when: 'before' } : { method: 'credit', at: 1, when: 'after' })
      await t.rejects(loads.verify('M1', '123456'), InjectedStoreFault)
      t.match(await store.getLifecycle('load', 'M1'), { status: 'AUTHORIZED', crediting: when === 'after' })
      await pass(PAST_LIFETIME_MS)
      const resumed = await loads.verify('M1', '123456')
      t.equal(authorized, 1, 'the card is not asked again')
      t.equal(await available(store, 'U1'), 500, 'the charged card is credited, once')
      if (when === 'before') {
        t.match(resumed, { status: 'LOADED' }, 'a credit that never began is made')
      } else {
        // past the store's retention of the credit's reference, whether it was made cannot be known here
        t.match(resumed, { status: 'FAILED', retryable: false })
        t.type(resumed.reconcile, 'string', 'an operator is told to check it')
        await pass(PAST_LIFETIME_MS)
        t.match(await loads.get('M1'), { status: 'FAILED' }, 'kept for the operator')
      }
    })
  }

  t.test(`${kind}: settled records and loads not yet at the card expire; records with money unsettled have no expiry`, async (t) => {
    const r = await prepaidRig(t, kind)
    t.match(await r.transfers.transfer({ clientTxnId: 'TR2', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: 100 }), { status: 'TRANSFERRED' })
    r.sim.faults.set('decrypt', { status: 503, times: 1 })
    t.match(await r.transfers.transfer({ clientTxnId: 'TR3', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: 100 }), { status: 'FAILED', retryable: true, held: true })
    await r.pass(LIFECYCLE_TTL_SECONDS * 1000 - 1000)
    t.not(await r.store.getLifecycle('transfer', 'TR2'), null, 'kept for its lifetime')
    await r.pass(1000)
    t.equal(await r.store.getLifecycle('transfer', 'TR2'), null, 'TRANSFERRED: expired after its lifetime')
    t.match(await r.store.getLifecycle('transfer', 'TR3'), { status: 'PENDING', hold: { state: 'held' } }, 'an answer unread, the amount held: kept')
  })
}
