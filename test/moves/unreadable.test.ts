// A party that may have had the request and answered something unreadable: the lifecycle answers 502
// FAILED retryable:true for the gateway, risk and the prepaid platform alike, changes nothing it cannot
// know, and a repeat completes. A transfer answer that could not be decrypted is read again, never re-sent.
import t from 'tap'
import { lifecycleRig } from './sims.js'
import type { Store } from '../../src/store/types.js'

const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '123', nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001' }
let n = 0
const ref = (p: string): string => `${p}${process.pid}u${++n}`

async function customer (store: Store, urn: string, balance = 0): Promise<void> {
  await store.putCustomer(urn, {})
  if (balance > 0) await store.credit(urn, balance, `seed-${urn}`)
}

for (const route of ['verifyOtp', 'authorize'] as const) {
  for (const malformed of ['json', 'schema'] as const) {
    t.test(`gateway ${route} answers ${malformed === 'json' ? 'garbage' : 'the wrong shape'}: 502 retryable, then the repeat loads once`, async (t) => {
      const { sims, store, call } = await lifecycleRig(t)
      const urn = ref('G')
      await customer(store, urn)
      const mref = ref('MR')
      await call('POST', '/v1/loads', { urn, amount: '400', merchantReferenceNo: mref, ...CARD })
      const otp = sims.gateway.lastOtp(mref)
      // the party acts, then its answer is mangled
      sims.gateway.faults.set(route, { malformed, phase: 'after', times: 1 })
      const first = await call('POST', `/v1/loads/${mref}/otp`, { otp })
      t.equal(first.status, 502)
      t.match(first.body, { status: 'FAILED', retryable: true })
      t.equal((await store.getCustomer(urn))?.available, 0, 'nothing credited on an unread answer')
      t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp })).body, { status: 'LOADED' })
      t.equal((await store.getCustomer(urn))?.available, 400)
    })
  }
}

t.test('risk answers garbage or the wrong shape: 502 retryable', async (t) => {
  const { sims, call } = await lifecycleRig(t)
  for (const malformed of ['json', 'schema'] as const) {
    sims.risk.faults.set('analyse', { malformed, times: 1 })
    const r = await call('POST', '/v1/risk/analyse', { clientTxnRefId: ref('R'), acctNumber: 'ACC1', purchaseAmount: '100', txnSourceType: 'POS' })
    t.equal(r.status, 502, malformed)
    t.match(r.body, { status: 'FAILED', retryable: true })
  }
})

t.test('prepaid answers garbage: 502 retryable, the amount held, and the repeat settles it', async (t) => {
  const { sims, store, call } = await lifecycleRig(t, { customers: [{ urn: 'UA', customerId: 'CA', accountNumber: 'ACC-A', balance: 10_000 }, { urn: 'UB', customerId: 'CB', accountNumber: 'ACC-B', balance: 0 }] })
  await customer(store, 'UA', 10_000)
  await customer(store, 'UB')
  const body = { clientTxnId: ref('TX'), fromUrn: 'UA', toUrn: 'UB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '1000' }
  sims.prepaid.faults.set('fundTransfer', { malformed: 'schema', phase: 'after', times: 1 })
  const first = await call('POST', '/v1/transfers', body)
  t.equal(first.status, 502)
  t.match(first.body, { status: 'FAILED', retryable: true, held: true })
  t.equal((await store.getCustomer('UA'))?.available, 9000, 'held')
  // the platform moved the money; a repeat re-sends (nothing was read) and meets 1054: a reconciliation
  t.match((await call('POST', '/v1/transfers', body)).body, { status: 'FAILED', retryable: false, upstream: { code: '1054' } })
})

t.test('the platform said 00 but Decrypt failed: the repeat decrypts the kept answer and sends nothing again', async (t) => {
  const { sims, store, call } = await lifecycleRig(t, { customers: [{ urn: 'KA', customerId: 'CA', accountNumber: 'ACC-A', balance: 10_000 }, { urn: 'KB', customerId: 'CB', accountNumber: 'ACC-B', balance: 0 }] })
  await customer(store, 'KA', 10_000)
  await customer(store, 'KB')
  for (const fault of [{ status: 503 }, { malformed: 'json' as const }, { hang: true }]) {
    const id = ref('TX')
    const body = { clientTxnId: id, fromUrn: 'KA', toUrn: 'KB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '1000' }
    const before = { a: (await store.getCustomer('KA'))?.available ?? 0, b: (await store.getCustomer('KB'))?.available ?? 0 }
    const sent = sims.prepaid.faults.count('fundTransfer')
    sims.prepaid.faults.set('decrypt', { ...fault, times: 1 })
    const first = await call('POST', '/v1/transfers', body)
    t.equal(first.status, 502, JSON.stringify(fault))
    t.match(first.body, { status: 'FAILED', retryable: true, held: true })
    t.match((await call('GET', `/v1/transfers/${id}`)).body, { status: 'PENDING', held: true })
    const again = await call('POST', '/v1/transfers', body)
    t.match(again.body, { status: 'TRANSFERRED', upstream: { code: '00' } })
    t.equal(sims.prepaid.faults.count('fundTransfer') - sent, 1, 'fundTransfer sent once')
    t.equal((await store.getCustomer('KA'))?.available, before.a - 1000)
    t.equal((await store.getCustomer('KB'))?.available, before.b + 1000)
    t.equal((await store.getCustomer('KA'))?.available, sims.prepaid.wallets.customer('KA')?.balance, 'as on the platform')
  }
})
