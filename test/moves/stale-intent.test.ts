// The store remembers the reference of a credit or debit for DECISION_RETENTION_DAYS (at least 7 days);
// lifecycle records live longer. A money operation a record names but never confirmed is completed by a
// repeat only while the store still remembers it; later the repeat asks for a reconciliation instead of
// applying it a second time.
import t from 'tap'
import { createGatewayAdapter } from '../../src/adapters/gateway/adapter.js'
import { createPrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import { LoadService } from '../../src/moves/loads.js'
import { TransferService } from '../../src/moves/transfers.js'
import { buildGatewaySim } from '../../src/sim/gateway-sim.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { manualClock } from '../../src/sim/clock.js'
import { MemoryStore } from '../../src/store/memory.js'
import { CARD, GATEWAY_CREDS, listen, PREPAID_CREDS, quietLogger } from '../adapters/fixtures/setup.js'
import { faultyStore, InjectedStoreFault } from './faulty-store.js'

const DAY_MS = 24 * 3600_000
const LATER_MS = 8 * DAY_MS + 1 // past the default retention of a money-operation reference

async function transferRig (t: { teardown: (fn: () => unknown) => void }): Promise<{
  sim: ReturnType<typeof buildPrepaidSim>, inner: MemoryStore, faulty: ReturnType<typeof faultyStore>, transfers: TransferService, clock: ReturnType<typeof manualClock>
}> {
  const clock = manualClock(Date.now())
  const sim = buildPrepaidSim({ ...PREPAID_CREDS })
  const url = await listen(sim.app)
  const prepaid = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await prepaid.close(); await sim.app.close() })
  const inner = new MemoryStore({ clock: clock.now })
  const faulty = faultyStore(inner)
  for (const [urn, balance] of [['SA', 1000], ['SB', 0]] as const) {
    sim.wallets.add({ urn, customerId: `C${urn}`, accountNumber: `ACC-${urn}`, balance })
    await inner.putCustomer(urn, {})
    if (balance > 0) await inner.credit(urn, balance, `seed-${urn}`)
  }
  return { sim, inner, faulty, transfers: new TransferService(faulty.store, prepaid, clock.now), clock }
}

const transfer = (id: string): Parameters<TransferService['transfer']>[0] =>
  ({ clientTxnId: id, fromUrn: 'SA', toUrn: 'SB', fromAccountNumber: 'ACC-SA', toAccountNumber: 'ACC-SB', amount: 300 })

t.test('a hold given back but not confirmed, repeated after the store forgot the give-back: reconciled, not given back twice', async (t) => {
  const r = await transferRig(t)
  r.sim.faults.set('encrypt', { status: 503, times: 1 })
  // the give-back is made, its confirmation is lost
  r.faulty.arm({ method: 'credit', at: 1, when: 'after' })
  await t.rejects(r.transfers.transfer(transfer('T1')), InjectedStoreFault)
  t.equal((await r.inner.getCustomer('SA'))?.available, 1000)
  r.clock.advance(LATER_MS)
  const later = await r.transfers.transfer(transfer('T1'))
  t.match(later, { status: 'FAILED', retryable: false, reconcile: /DECISION_RETENTION_DAYS/ })
  t.equal((await r.inner.getCustomer('SA'))?.available, 1000, 'given back once')
  t.equal(r.sim.wallets.customer('SA')?.balance, 1000, 'nothing sent')
  t.match(await r.transfers.transfer(transfer('T1')), { status: 'FAILED', replayed: true })
})

t.test('a transfer the platform made, the receiver\'s credit not confirmed, repeated after the store forgot it: reconciled', async (t) => {
  const r = await transferRig(t)
  r.faulty.arm({ method: 'credit', at: 1, when: 'after' })
  await t.rejects(r.transfers.transfer(transfer('T2')), InjectedStoreFault)
  t.equal((await r.inner.getCustomer('SB'))?.available, 300)
  r.clock.advance(LATER_MS)
  t.match(await r.transfers.transfer(transfer('T2')), { status: 'FAILED', retryable: false, reconcile: /DECISION_RETENTION_DAYS/ })
  t.equal((await r.inner.getCustomer('SB'))?.available, 300, 'credited once')
})

t.test('within the retention the same repeat completes', async (t) => {
  const r = await transferRig(t)
  r.faulty.arm({ method: 'credit', at: 1, when: 'after' })
  await t.rejects(r.transfers.transfer(transfer('T3')), InjectedStoreFault)
  r.clock.advance(6 * DAY_MS)
  t.match(await r.transfers.transfer(transfer('T3')), { status: 'TRANSFERRED' })
  t.equal((await r.inner.getCustomer('SB'))?.available, 300, 'credited once')
})

t.test('a load authorized, its credit not confirmed, repeated after the store forgot it: reconciled', async (t) => {
  const clock = manualClock(Date.now())
  const sim = buildGatewaySim({ ...GATEWAY_CREDS, otpGenerator: () => '123456' })
  const url = await listen(sim.app)
  const gateway = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await gateway.close(); await sim.app.close() })
  const inner = new MemoryStore({ clock: clock.now })
  const faulty = faultyStore(inner)
  await inner.putCustomer('LA', {})
  const loads = new LoadService(faulty.store, gateway, clock.now)
  await loads.start({ ...CARD, urn: 'LA', amount: 500, merchantReferenceNo: 'L1' })
  faulty.arm({ method: 'credit', at: 1, when: 'after' })
  await t.rejects(loads.verify('L1', '123456'), InjectedStoreFault)
  t.equal((await inner.getCustomer('LA'))?.available, 500)
  clock.advance(LATER_MS)
  t.match(await loads.verify('L1', '123456'), { status: 'FAILED', retryable: false, reconcile: /DECISION_RETENTION_DAYS/ })
  t.equal((await inner.getCustomer('LA'))?.available, 500, 'credited once')
})
