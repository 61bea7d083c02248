// Money is never sent into a wallet that can use none of it: a load or a transfer to a CLOSED customer is
// refused (409 WRONG_STATE) before any party is called, nothing held, nothing sent. A BLOCKED customer
// still receives (the block is temporary, and stops only what leaves the wallet), and a call already
// under way when the customer was closed still settles: the card may be charged, the money may have moved.
import t from 'tap'
import { lifecycleRig, type Call, type Sims } from './sims.js'
import type { Store } from '../../src/store/types.js'
import { seedWallets, STORE_KINDS, storeOf, walletBalances } from './wallets.js'

interface Teardown { teardown: (fn: () => unknown) => void }

const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '123', nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001' }
const START = 10_000

/** Sender A and receiver B, known to both sides with the same balances. */
async function rig (t: Teardown, kind: typeof STORE_KINDS[number]): Promise<{ sims: Sims, store: Store, call: Call }> {
  const { sims, store, call } = await lifecycleRig(t, {}, await storeOf(t, kind))
  await seedWallets(sims, store, { A: START, B: 0 })
  return { sims, store, call }
}

const transfer = (clientTxnId: string): Record<string, string> =>
  ({ clientTxnId, fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '2500' })
const load = (merchantReferenceNo: string): Record<string, string> => ({ urn: 'B', amount: '700', merchantReferenceNo, ...CARD })

function partyCalls (sims: Sims): number {
  const all = { ...sims.gateway.faults.allCounts(), ...sims.prepaid.faults.allCounts() }
  return Object.values(all).reduce((a, b) => a + b, 0)
}

const UNMOVED = { A: START, platformA: START, B: 0, platformB: 0 }

for (const kind of STORE_KINDS) {
  t.test(`${kind}: a load or a transfer to a CLOSED customer is refused before any party is called`, async (t) => {
    const { sims, store, call } = await rig(t, kind)
    await store.putCustomer('B', { status: 'CLOSED' })

    const started = await call('POST', '/v1/loads', load('LD-CLOSED'))
    t.equal(started.status, 409)
    t.match(started.body, { error: 'WRONG_STATE', message: /\bB\b.*CLOSED/ }, 'names the customer and its status')
    t.equal((await call('GET', '/v1/loads/LD-CLOSED')).status, 404, 'no load recorded')

    const moved = await call('POST', '/v1/transfers', transfer('TR-CLOSED'))
    t.equal(moved.status, 409)
    t.match(moved.body, { error: 'WRONG_STATE', message: /\bB\b.*CLOSED/ })
    t.equal((await call('GET', '/v1/transfers/TR-CLOSED')).status, 404, 'no transfer recorded')

    t.equal(partyCalls(sims), 0, 'no party was called')
    t.same(await walletBalances(sims, store, ['A', 'B']), UNMOVED, 'nothing held, nothing moved')
  })

  t.test(`${kind}: a load whose customer was closed after the OTP went is refused before the OTP is verified`, async (t) => {
    const { sims, store, call } = await rig(t, kind)
    t.match((await call('POST', '/v1/loads', load('LD-LATER'))).body, { status: 'OTP_SENT' })
    const otp = sims.gateway.lastOtp('LD-LATER')
    await store.putCustomer('B', { status: 'CLOSED' })
    const verified = await call('POST', '/v1/loads/LD-LATER/otp', { otp })
    t.equal(verified.status, 409)
    t.match(verified.body, { error: 'WRONG_STATE', message: /\bB\b.*CLOSED/ })
    const resent = await call('POST', '/v1/loads/LD-LATER/otp/resend', {})
    t.equal(resent.status, 409, 'no new OTP for a load that cannot go on')
    t.match(resent.body, { error: 'WRONG_STATE' })
    t.equal(sims.gateway.faults.count('verifyOtp') + sims.gateway.faults.count('authorize'), 0, 'the card was not asked for')
    t.equal(sims.gateway.faults.count('generateOtp'), 1, 'the first OTP only')
    t.match((await call('GET', '/v1/loads/LD-LATER')).body, { status: 'OTP_SENT' }, 'the load stands as it was')
    t.equal((await store.getCustomer('B'))?.available, 0)

    // reopened, the same load goes on from where it stood
    await store.putCustomer('B', { status: 'ACTIVE' })
    t.match((await call('POST', '/v1/loads/LD-LATER/otp', { otp })).body, { status: 'LOADED', available: '700' })
  })

  t.test(`${kind}: a BLOCKED customer still receives loads and transfers`, async (t) => {
    const { sims, store, call } = await rig(t, kind)
    await store.putCustomer('B', { status: 'BLOCKED' })
    t.match((await call('POST', '/v1/loads', load('LD-BLOCKED'))).body, { status: 'OTP_SENT' })
    t.match((await call('POST', '/v1/loads/LD-BLOCKED/otp', { otp: sims.gateway.lastOtp('LD-BLOCKED') })).body, { status: 'LOADED' })
    t.match((await call('POST', '/v1/transfers', transfer('TR-BLOCKED'))).body, { status: 'TRANSFERRED' })
    t.same(await walletBalances(sims, store, ['A', 'B']), { A: START - 2500, platformA: START - 2500, B: 700 + 2500, platformB: 2500 })
  })

  t.test(`${kind}: a load or a transfer under way when the customer is closed still settles on its repeat`, async (t) => {
    const { sims, store, call } = await rig(t, kind)
    // the gateway charged the card and its answer was lost
    await call('POST', '/v1/loads', load('LD-UNDERWAY'))
    const otp = sims.gateway.lastOtp('LD-UNDERWAY')
    sims.gateway.faults.set('authorize', { reset: true, phase: 'after', times: 1 })
    t.match((await call('POST', '/v1/loads/LD-UNDERWAY/otp', { otp })).body, { status: 'FAILED', retryable: true })
    // the platform moved the money and its answer could not be read
    sims.prepaid.faults.set('decrypt', { malformed: 'schema', times: 1 })
    t.match((await call('POST', '/v1/transfers', transfer('TR-UNDERWAY'))).body, { status: 'FAILED', retryable: true, held: true })

    await store.putCustomer('B', { status: 'CLOSED' })
    t.match((await call('POST', '/v1/loads/LD-UNDERWAY/otp', { otp })).body, { status: 'LOADED' }, 'the charged card is credited')
    t.match((await call('POST', '/v1/transfers', transfer('TR-UNDERWAY'))).body, { status: 'TRANSFERRED' }, 'the money the platform moved is credited')
    t.same(await walletBalances(sims, store, ['A', 'B']), { A: START - 2500, platformA: START - 2500, B: 700 + 2500, platformB: 2500 })
  })
}
