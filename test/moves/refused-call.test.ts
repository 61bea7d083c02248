// One rule for every party (gateway, risk, prepaid platform) and every way a call can fail to be heard: an
// HTTP error status of either class without a readable answer, or no answer at all, is FAILED, HTTP 502,
// `retryable: true`. A 4xx does not prove the party did nothing (a proxy's, or the party's own after it
// acted), so a transfer's or an unload's amount stays held and the repeat sends again: the client is never
// told "do not repeat" while money waits on a repeat.
import t, { type Test } from 'tap'
import { adminCall, fastTimeouts, lifecycleRig, type Call } from './sims.js'
import { build } from '../helpers/app.js'
import { seedWallets, STORE_KINDS, storeOf, walletBalances } from './wallets.js'
import type { Fault } from '../../src/sim/faults.js'

const START = 100_000
const AMOUNT = 10_000
const FEE = 150
const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '123', nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001' }

/** The status classes, each as the party's simulator answers it before acting. */
const CLASSES: ReadonlyArray<[string, Fault]> = [
  ['4xx', { status: 404, times: 1 }],
  ['5xx', { status: 503, times: 1 }],
  ['no answer', { reset: true, times: 1 }]
]

const unload = (clientTxnId: string): Record<string, unknown> => ({
  clientTxnId, urn: 'A', accountNumber: 'ACC-A', amount: String(AMOUNT), fee: String(FEE), receiver: 'A CARDHOLDER', sourceType: 1,
  fundFlowType: 'UNLOAD', implId: 'IMPL01', implType: 'BANK', beneficiaryId: 42
})
const transfer = (clientTxnId: string): Record<string, unknown> =>
  ({ clientTxnId, fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: String(AMOUNT) })

/** The answer every party's unheard call gets: repeat it. */
function unheard (t: Test, res: { status: number, body: Record<string, unknown> }, what: string): void {
  t.equal(res.status, 502, `${what}: HTTP 502`)
  t.match(res.body, { status: 'FAILED', retryable: true, upstream: null }, `${what}: FAILED, repeat it`)
  t.notOk('reconcile' in res.body, `${what}: nothing for an operator`)
}

for (const kind of STORE_KINDS) {
  for (const [name, fault] of CLASSES) {
    t.test(`${kind}, prepaid ${name}: an unload and a transfer stay held, answered 502 retryable; the repeat settles them once`, async (t) => {
      const { sims, store, call } = await lifecycleRig(t, {}, await storeOf(t, kind))
      await seedWallets(sims, store, { A: START, B: 0 })

      sims.prepaid.faults.set('unload', fault)
      const u = await call('POST', '/v1/unloads', unload('UL1'))
      unheard(t, u, 'unload')
      t.match(u.body, { held: true })
      t.match((await call('GET', '/v1/unloads/UL1')).body, { status: 'PENDING', held: true })

      sims.prepaid.faults.set('fundTransfer', fault)
      const tr = await call('POST', '/v1/transfers', transfer('TR1'))
      unheard(t, tr, 'transfer')
      t.match(tr.body, { held: true })
      t.match((await call('GET', '/v1/transfers/TR1')).body, { status: 'PENDING', held: true })
      t.same(await walletBalances(sims, store, ['A', 'B']), { A: START - 2 * AMOUNT - FEE, platformA: START, B: 0, platformB: 0 }, 'held here, moved nowhere')

      t.match((await call('POST', '/v1/unloads', unload('UL1'))).body, { status: 'UNLOADED' })
      t.match((await call('POST', '/v1/transfers', transfer('TR1'))).body, { status: 'TRANSFERRED' })
      const after = START - 2 * AMOUNT - FEE
      t.same(await walletBalances(sims, store, ['A', 'B']), { A: after, platformA: after, B: AMOUNT, platformB: AMOUNT }, 'each moved once, on both sides')
    })

    t.test(`${kind}, gateway ${name}: a load's OTP and its authorize answered 502 retryable; the repeat loads once`, async (t) => {
      const { sims, store, call } = await lifecycleRig(t, {}, await storeOf(t, kind))
      await store.putCustomer('L', {})
      const body = { urn: 'L', amount: '700', merchantReferenceNo: 'LD1', ...CARD }

      sims.gateway.faults.set('generateOtp', fault)
      unheard(t, await call('POST', '/v1/loads', body), 'generateOtp')
      t.match((await call('POST', '/v1/loads', body)).body, { status: 'OTP_SENT' })

      sims.gateway.faults.set('authorize', fault)
      const otp = sims.gateway.lastOtp('LD1')
      unheard(t, await call('POST', '/v1/loads/LD1/otp', { otp }), 'authorize')
      t.match((await call('GET', '/v1/loads/LD1')).body, { status: 'OTP_VERIFIED' }, 'the card may be charged: the repeat authorizes again')
      t.equal((await store.getCustomer('L'))?.available, 0)
      t.match((await call('POST', '/v1/loads/LD1/otp', { otp })).body, { status: 'LOADED' })
      t.equal((await store.getCustomer('L'))?.available, 700, 'credited once')
    })

    t.test(`${kind}, risk ${name}: answered 502 retryable`, async (t) => {
      const { sims, call } = await lifecycleRig(t, {}, await storeOf(t, kind))
      const body = { clientTxnRefId: 'R1', acctNumber: 'ACC1', purchaseAmount: '3000', txnSourceType: 'POS' }
      sims.risk.faults.set('analyse', fault)
      unheard(t, await call('POST', '/v1/risk/analyse', body), 'analyse')
      t.match((await call('POST', '/v1/risk/analyse', body)).body, { status: 'ASSESSED' })
    })
  }

  t.test(`${kind}: a wrong PREPAID_UNLOAD_PATH meets the platform's 404: held and repeatable, and unloaded once the path is right`, async (t) => {
    const { sims, store, call } = await lifecycleRig(t, {}, await storeOf(t, kind), { PREPAID_UNLOAD_PATH: '/test/v2/unlaod' })
    await seedWallets(sims, store, { A: START, B: 0 })
    for (let i = 0; i < 2; i++) {
      const u = await call('POST', '/v1/unloads', unload('UL404'))
      unheard(t, u, `attempt ${i + 1}`)
      t.match(u.body, { held: true })
    }
    t.match((await call('GET', '/v1/unloads/UL404')).body, { status: 'PENDING', held: true })
    t.same(await walletBalances(sims, store, ['A', 'B']), { A: START - AMOUNT - FEE, platformA: START, B: 0, platformB: 0 }, 'held once, however often repeated')

    // the operator corrects the path and restarts extauth over the same store: the client's repeat unloads
    const { adminApp } = await build(t, { store, env: sims.env, configure: fastTimeouts })
    const fixed: Call = await adminCall(t, adminApp)
    t.match((await fixed('POST', '/v1/unloads', unload('UL404'))).body, { status: 'UNLOADED' })
    t.same(await walletBalances(sims, store, ['A', 'B']), { A: START - AMOUNT - FEE, platformA: START - AMOUNT - FEE, B: 0, platformB: 0 })
  })
}
