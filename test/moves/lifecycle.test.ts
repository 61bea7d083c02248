// The card lifecycle over real HTTP against the simulators: loads through the OTP flow, pre-auth capture
// and cancellation, wallet transfers, risk analysis; upstream declines and timeouts change nothing in the
// store, and a repeated reference never credits twice.
import { join } from 'node:path'
import t from 'tap'
import { build } from '../helpers/app.js'
import { adminCall as client, fastTimeouts, lifecycleRig, startSims } from './sims.js'
import { manualClock } from '../../src/sim/clock.js'
import type { Store } from '../../src/store/types.js'
import { MemoryStore } from '../../src/store/memory.js'

const setup = lifecycleRig

const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '123', nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001' }
let n = 0
const ref = (p: string): string => `${p}${process.pid}x${++n}`

async function customer (store: Store, urn: string, balance = 0): Promise<void> {
  await store.putCustomer(urn, {})
  if (balance > 0) await store.credit(urn, balance, `seed-${urn}`)
}

t.test('a load: OTP sent, a wrong OTP, the right one, credited once', async (t) => {
  const { sims, store, call } = await setup(t)
  const urn = ref('L')
  await customer(store, urn)
  const mref = ref('MR')
  const started = await call('POST', '/v1/loads', { urn, amount: '5000', merchantReferenceNo: mref, ...CARD })
  t.equal(started.status, 200)
  t.match(started.body, { status: 'OTP_SENT', merchantReferenceNo: mref, amount: '5000' })
  t.equal((await call('POST', '/v1/loads', { urn, amount: '5000', merchantReferenceNo: mref, ...CARD })).body.replayed, true, 'a repeat sends no second OTP')
  t.equal(sims.gateway.faults.count('generateOtp'), 1)
  t.equal((await call('POST', '/v1/loads', { urn, amount: '6000', merchantReferenceNo: mref, ...CARD })).status, 409, 'same reference, other amount')

  t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp: '000000' })).body, { status: 'OTP_INVALID', upstream: { code: '450' } })
  t.equal((await store.getCustomer(urn))?.available, 0)
  const otp = sims.gateway.lastOtp(mref)
  const loaded = await call('POST', `/v1/loads/${mref}/otp`, { otp })
  t.match(loaded.body, { status: 'LOADED', available: '5000' })
  t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp })).body, { status: 'LOADED', replayed: true })
  t.equal((await store.getCustomer(urn))?.available, 5000, 'credited exactly once')
  t.match((await call('GET', `/v1/loads/${mref}`)).body, { status: 'LOADED', urn })
  t.equal((await call('GET', '/v1/loads/nope')).status, 404)
})

t.test('OTP expired, resent, exhausted; a gateway decline', async (t) => {
  const clock = manualClock()
  let otp = 100000
  const { sims, store, call } = await setup(t, { gateway: { now: clock.now, otpGenerator: () => String(++otp), validityPeriodMin: 5, verifyMax: 3, issuer: (v) => v.amount === 9999 ? '51' : '00' } })
  const urn = ref('L')
  await customer(store, urn)

  const expiring = ref('MR')
  await call('POST', '/v1/loads', { urn, amount: '100', merchantReferenceNo: expiring, ...CARD })
  const first = sims.gateway.lastOtp(expiring)
  clock.advance(6 * 60_000)
  t.match((await call('POST', `/v1/loads/${expiring}/otp`, { otp: first })).body, { status: 'OTP_EXPIRED', upstream: { code: '451' } })
  t.match((await call('POST', `/v1/loads/${expiring}/otp/resend`, {})).body, { status: 'OTP_SENT' })
  t.match((await call('POST', `/v1/loads/${expiring}/otp`, { otp: first })).body, { status: 'OTP_INVALID' }, 'the newer OTP replaced the first')
  t.match((await call('POST', `/v1/loads/${expiring}/otp`, { otp: sims.gateway.lastOtp(expiring) })).body, { status: 'LOADED' })

  const exhausted = ref('MR')
  await call('POST', '/v1/loads', { urn, amount: '100', merchantReferenceNo: exhausted, ...CARD })
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await call('POST', `/v1/loads/${exhausted}/otp`, { otp: '999999' })).body.status)
  t.equal(statuses.at(-1), 'OTP_EXHAUSTED')
  t.match((await call('POST', `/v1/loads/${exhausted}/otp`, { otp: sims.gateway.lastOtp(exhausted) ?? '123456' })).body, { status: 'OTP_EXHAUSTED', replayed: true })

  const declined = ref('MR')
  await call('POST', '/v1/loads', { urn, amount: '9999', merchantReferenceNo: declined, ...CARD })
  t.match((await call('POST', `/v1/loads/${declined}/otp`, { otp: sims.gateway.lastOtp(declined) })).body, { status: 'DECLINED', upstream: { code: '51' } })
  t.equal((await store.getCustomer(urn))?.available, 100, 'only the one load that succeeded was credited')
})

t.test('an upstream timeout changes nothing; the retry completes', async (t) => {
  const { sims, store, call } = await setup(t)
  const urn = ref('L')
  await customer(store, urn)
  const mref = ref('MR')
  sims.gateway.faults.set('generateOtp', { hang: true, times: 1 })
  const failed = await call('POST', '/v1/loads', { urn, amount: '700', merchantReferenceNo: mref, ...CARD })
  t.equal(failed.status, 502)
  t.match(failed.body, { status: 'FAILED', retryable: true })
  t.equal((await call('GET', `/v1/loads/${mref}`)).status, 404, 'no load was recorded')
  t.match((await call('POST', '/v1/loads', { urn, amount: '700', merchantReferenceNo: mref, ...CARD })).body, { status: 'OTP_SENT' })
  sims.gateway.faults.set('verifyOtp', { hang: true, times: 1 })
  t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp: sims.gateway.lastOtp(mref) })).body, { status: 'FAILED', retryable: true })
  t.equal((await store.getCustomer(urn))?.available, 0)
  t.match((await call('GET', `/v1/loads/${mref}`)).body, { status: 'OTP_SENT' }, 'the load is where it was')
  t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp: sims.gateway.lastOtp(mref) })).body, { status: 'LOADED' })
  t.equal((await store.getCustomer(urn))?.available, 700)
})

t.test('the gateway authorized but its answer was lost: the retry credits once', async (t) => {
  const { sims, store, call } = await setup(t)
  const urn = ref('L')
  await customer(store, urn)
  const mref = ref('MR')
  await call('POST', '/v1/loads', { urn, amount: '1500', merchantReferenceNo: mref, ...CARD })
  sims.gateway.faults.set('authorize', { reset: true, phase: 'after', times: 1 })
  const otp = sims.gateway.lastOtp(mref)
  t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp })).body, { status: 'FAILED' })
  t.equal((await store.getCustomer(urn))?.available, 0)
  const done = await call('POST', `/v1/loads/${mref}/otp`, { otp })
  t.match(done.body, { status: 'LOADED', upstream: { code: '96' } }, 'the repeat authorize says PREVIOUSLY AUTHORIZED')
  t.equal((await store.getCustomer(urn))?.available, 1500)
})

t.test('we stopped after the upstream said yes: the retry completes the store update once', async (t) => {
  const inner = new MemoryStore()
  let failNext = 0
  // a store whose next credit fails, as if the process stopped right after the upstream's answer
  const store = new Proxy(inner, {
    get (target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown
      if (prop === 'credit' && typeof v === 'function') {
        return async (...args: unknown[]) => {
          if (failNext > 0) { failNext--; throw new Error('store went away') }
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        }
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    }
  })
  const { sims, call } = await setup(t, { customers: [{ urn: 'TA', customerId: 'CA', accountNumber: 'ACC-A', balance: 10_000 }, { urn: 'TB', customerId: 'CB', accountNumber: 'ACC-B', balance: 0 }] }, store)
  await customer(inner, 'TA', 10_000)
  await customer(inner, 'TB')
  const mref = ref('MR')
  await call('POST', '/v1/loads', { urn: 'TB', amount: '300', merchantReferenceNo: mref, ...CARD })
  failNext = 1
  const otp = sims.gateway.lastOtp(mref)
  t.equal((await call('POST', `/v1/loads/${mref}/otp`, { otp })).status, 503)
  t.match((await call('GET', `/v1/loads/${mref}`)).body, { status: 'AUTHORIZED' })
  t.match((await call('POST', `/v1/loads/${mref}/otp`, { otp })).body, { status: 'LOADED' })
  t.equal((await inner.getCustomer('TB'))?.available, 300)

  const id = ref('TX')
  const transfer = { clientTxnId: id, fromUrn: 'TA', toUrn: 'TB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '2500' }
  failNext = 1
  t.equal((await call('POST', '/v1/transfers', transfer)).status, 503)
  t.match((await call('GET', `/v1/transfers/${id}`)).body, { status: 'AUTHORIZED' })
  t.match((await call('POST', '/v1/transfers', transfer)).body, { status: 'TRANSFERRED' })
  t.match((await call('POST', '/v1/transfers', transfer)).body, { status: 'TRANSFERRED', replayed: true })
  t.equal((await inner.getCustomer('TA'))?.available, 7500, 'debited once')
  t.equal((await inner.getCustomer('TB'))?.available, 2800, 'credited once')
})

t.test('transfers: moved once on 00; an unknown receiver and a timeout change nothing', async (t) => {
  const { sims, store, call } = await setup(t, { customers: [{ urn: 'WA', customerId: 'CA', accountNumber: 'ACC-A', balance: 10_000 }, { urn: 'WB', customerId: 'CB', accountNumber: 'ACC-B', balance: 0 }] })
  await customer(store, 'WA', 10_000)
  await customer(store, 'WB')
  await customer(store, 'WZ')
  const base = { fromUrn: 'WA', toUrn: 'WB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '1000' }
  const id = ref('TX')
  const first = await call('POST', '/v1/transfers', { ...base, clientTxnId: id })
  t.match(first.body, { status: 'TRANSFERRED', upstream: { code: '00' } })
  t.match((await call('POST', '/v1/transfers', { ...base, clientTxnId: id })).body, { status: 'TRANSFERRED', replayed: true })
  t.equal((await call('POST', '/v1/transfers', { ...base, amount: '2', clientTxnId: id })).status, 409)
  t.equal((await store.getCustomer('WA'))?.available, 9000)
  t.equal((await store.getCustomer('WB'))?.available, 1000)

  const unknown = await call('POST', '/v1/transfers', { ...base, toUrn: 'WZ', toAccountNumber: 'ACC-Z', clientTxnId: ref('TX') })
  t.match(unknown.body, { status: 'DECLINED' })
  t.match(String((unknown.body.upstream as { code: string }).code), /^(1110|6910|6901|6905)$/)
  t.equal((await store.getCustomer('WA'))?.available, 9000, 'the hold was given back')

  // the platform may have the request: the sender's amount stays held until a repeat settles it
  sims.prepaid.faults.set('fundTransfer', { hang: true, times: 1 })
  const slow = ref('TX')
  const timedOut = await call('POST', '/v1/transfers', { ...base, clientTxnId: slow })
  t.equal(timedOut.status, 502)
  t.match(timedOut.body, { status: 'FAILED', retryable: true, held: true })
  t.equal((await store.getCustomer('WA'))?.available, 8000, 'held, not spendable')
  t.equal((await store.getCustomer('WB'))?.available, 1000, 'not credited')
  t.match((await call('GET', `/v1/transfers/${slow}`)).body, { status: 'PENDING', held: true })
  t.match((await call('POST', '/v1/transfers', { ...base, clientTxnId: slow })).body, { status: 'TRANSFERRED' })
  t.equal((await store.getCustomer('WA'))?.available, 8000, 'the hold became the debit: taken once')
  t.equal((await store.getCustomer('WB'))?.available, 2000)

  // a request that never reached the platform gives the hold back at once
  sims.prepaid.faults.set('encrypt', { status: 503, times: 1 })
  const refused = await call('POST', '/v1/transfers', { ...base, clientTxnId: ref('TX') })
  t.match(refused.body, { status: 'FAILED' })
  t.equal((await store.getCustomer('WA'))?.available, 8000, 'nothing held when nothing was sent')

  t.match((await call('POST', '/v1/transfers', { ...base, amount: '999999', clientTxnId: ref('TX') })).body, { status: 'DECLINED', reason: 'INSUFFICIENT_FUNDS' })
  t.equal((await store.getCustomer('WA'))?.available, 8000)
  t.equal((await call('POST', '/v1/transfers', { ...base, toUrn: 'WA', clientTxnId: ref('TX') })).status, 400, 'one customer to itself')
})

t.test('pre-auth capture and cancellation', async (t) => {
  const { sims, store, call } = await setup(t)
  const urn = ref('P')
  await customer(store, urn)
  const loadRef = async (): Promise<{ mref: string, pg: string }> => {
    const mref = ref('MR')
    await call('POST', '/v1/loads', { urn, amount: '800', merchantReferenceNo: mref, ...CARD })
    await call('POST', `/v1/loads/${mref}/otp`, { otp: sims.gateway.lastOtp(mref) })
    return { mref, pg: String(sims.gateway.transaction(mref)?.pgTransactionId) }
  }
  const a = await loadRef()
  t.match((await call('POST', `/v1/preauths/${a.pg}/capture`, { merchantReferenceNo: a.mref, amount: '500' })).body, { status: 'CAPTURED' })
  t.match((await call('POST', `/v1/preauths/${a.pg}/capture`, { merchantReferenceNo: a.mref, amount: '500' })).body, { status: 'CAPTURED', replayed: true })
  const b = await loadRef()
  t.match((await call('POST', `/v1/preauths/${b.pg}/cancel`, { merchantReferenceNo: b.mref })).body, { status: 'CANCELLED' })
  t.match((await call('POST', `/v1/preauths/${b.pg}/capture`, { merchantReferenceNo: b.mref })).body, { status: 'DECLINED' }, 'a cancelled pre-auth cannot be captured')
})

t.test('risk: the analyse route, and risk inside the decision within its timeout', async (t) => {
  const sims = await startSims(t)
  const { mkdtemp, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const dir = await mkdtemp(join(tmpdir(), 'extauth-risk-'))
  await writeFile(join(dir, '10-risk.json'), JSON.stringify({ rules: [{ id: 'risky', description: 'high risk rating', when: { 'risk.ruleRating': { gte: 80 } }, then: { decline: '34' } }] }))
  const store = new MemoryStore()
  const { adminApp, publicApp } = await build(t, { store, env: { ...sims.env, RULES_DIR: dir, DECISION_DEADLINE_MS: '1500' }, configure: fastTimeouts })
  const call = await client(t, adminApp)
  const analysed = await call('POST', '/v1/risk/analyse', { clientTxnRefId: 'R1', acctNumber: 'ACC1', purchaseAmount: '3000000', txnSourceType: 'POS' })
  t.match(analysed.body, { status: 'ASSESSED', assessment: { ruleRating: 90, ruleSuggestion: 'DENY' } })
  t.equal((await call('POST', '/v1/risk/analyse', { clientTxnRefId: 'R 1!', acctNumber: 'A', purchaseAmount: '1', txnSourceType: 'POS' })).status, 400, 'refused before sending')

  const urn = ref('R')
  await customer(store, urn, 10_000_000)
  const { authBody, platformHeaders } = await import('../helpers/config.js')
  const decide = async (amount: string): Promise<{ code: string, ms: number }> => {
    const t0 = performance.now()
    const r = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: authBody({ urn, transactionAmount: amount }) })
    return { code: r.json().responseCode as string, ms: performance.now() - t0 }
  }
  t.equal((await decide('3000000')).code, '34', 'a high rating declines')
  t.equal((await decide('1000')).code, '00', 'a low rating approves')
  sims.risk.faults.set('*', { hang: true })
  const timedOut = await decide('3000000')
  // a 00 is the rules' answer after the risk call was cut at its timeout (1000 ms): the deadline guard
  // (1500 ms) answers 05, so the call was cut before the deadline, whatever the time it took on a busy machine
  t.equal(timedOut.code, '00', 'risk unavailable: the rules decide without it, before the deadline')
  t.ok(timedOut.ms >= 1000 - 20, `after the risk call's timeout (${timedOut.ms.toFixed(0)} ms)`)
})

t.test('transfers: the sender cannot spend the amount while the platform moves it', async (t) => {
  const { sims, store, call } = await setup(t, { customers: [{ urn: 'SA', customerId: 'CA', accountNumber: 'ACC-A', balance: 10_000 }, { urn: 'SB', customerId: 'CB', accountNumber: 'ACC-B', balance: 0 }] })
  await customer(store, 'SA', 10_000)
  await customer(store, 'SB')
  sims.prepaid.faults.set('fundTransfer', { delayMs: 400, times: 1 })
  const moving = call('POST', '/v1/transfers', { clientTxnId: ref('TX'), fromUrn: 'SA', toUrn: 'SB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '2500' })
  // the platform has the transfer (the amount is held before it is asked); it answers 400 ms later, and
  // should the spend come after that on a busy machine, 10,000 is more than the 7,500 left all the same
  for (let i = 0; sims.prepaid.faults.count('fundTransfer') === 0; i++) {
    if (i > 1000) throw new Error('the platform never got the transfer')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const spend = await call('POST', '/admin/v1/customers/SA/debits', { amount: '10000', reference: 'spend-all' })
  t.equal(spend.status, 409, 'the whole old balance cannot be spent during the transfer')
  t.match((await moving).body, { status: 'TRANSFERRED' })
  t.equal((await store.getCustomer('SA'))?.available, 7500)
  t.equal((await store.getCustomer('SB'))?.available, 2500)
  t.equal(((await store.getCustomer('SA'))?.available ?? 0) + ((await store.getCustomer('SB'))?.available ?? 0), 10_000, 'no money created')
})

t.test('transfers: a clientTxnId the platform already had is a reconciliation, replayed as such', async (t) => {
  const { sims, store, call } = await setup(t, { customers: [{ urn: 'DA', customerId: 'CA', accountNumber: 'ACC-A', balance: 10_000 }, { urn: 'DB', customerId: 'CB', accountNumber: 'ACC-B', balance: 0 }] })
  await customer(store, 'DA', 10_000)
  await customer(store, 'DB')
  const id = ref('TX')
  const body = { clientTxnId: id, fromUrn: 'DA', toUrn: 'DB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '1000' }
  // the platform takes the transfer, but its answer is lost on the way back
  sims.prepaid.faults.set('fundTransfer', { reset: true, phase: 'after', times: 1 })
  t.match((await call('POST', '/v1/transfers', body)).body, { status: 'FAILED', held: true })
  const again = await call('POST', '/v1/transfers', body)
  t.match(again.body, { status: 'FAILED', retryable: false, held: true, upstream: { code: '1054' } })
  t.type(again.body.reconcile, 'string')
  t.match((await call('POST', '/v1/transfers', body)).body, { status: 'FAILED', replayed: true }, 'a further repeat changes nothing')
  t.equal((await store.getCustomer('DA'))?.available, 9000, 'the amount stays held for a person to settle')
  t.equal((await store.getCustomer('DB'))?.available, 0, 'nothing credited on a guess')
})
