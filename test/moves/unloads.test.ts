// Wallet unloads over real HTTP against the prepaid simulator: amount + fee held first, final on 00, given
// back on a definite decline, kept while the outcome is unknown; after every scenario extauth's balance is
// the platform's.
import t from 'tap'
import { lifecycleRig, type Call, type Sims } from './sims.js'
import type { Store } from '../../src/store/types.js'

interface Teardown { teardown: (fn: () => unknown) => void }

const START = 100_000
const AMOUNT = 10_000
const FEE = 150
let n = 0

interface Wallet { urn: string, customerId: string, accountNumber: string }

/** A customer known to both sides with the same balance. */
async function wallet (sims: Sims, store: Store, balance = START): Promise<Wallet> {
  const id = `${process.pid}${++n}`
  const w = { urn: `U${id}`, customerId: `C${id}`, accountNumber: `ACC${id}` }
  sims.prepaid.wallets.add({ ...w, balance })
  await store.putCustomer(w.urn, { customerId: w.customerId })
  await store.credit(w.urn, balance, `seed-${w.urn}`)
  return w
}

function unloadBody (w: Wallet, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clientTxnId: `UL${w.urn}x${++n}`,
    urn: w.urn,
    accountNumber: w.accountNumber,
    amount: String(AMOUNT),
    fee: String(FEE),
    receiver: 'A CARDHOLDER',
    sourceType: 1,
    fundFlowType: 'UNLOAD',
    implId: 'IMPL01',
    implType: 'BANK',
    beneficiaryId: 42,
    customerMobile: '919800000001',
    ...extra
  }
}

async function balances (sims: Sims, store: Store, w: Wallet): Promise<{ here: number, platform: number }> {
  return { here: (await store.getCustomer(w.urn))?.available ?? -1, platform: sims.prepaid.wallets.customer(w.urn)?.balance ?? -1 }
}

async function rig (t: Teardown, opts: Parameters<typeof lifecycleRig>[1] = {}, env: Record<string, string> = {}): Promise<{ sims: Sims, store: Store, call: Call }> {
  return await lifecycleRig(t, opts, undefined, env)
}

t.test('an unload: amount + fee leave the wallet once, on both sides; a repeat is a replay', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store)
  const body = unloadBody(w)
  const first = await call('POST', '/v1/unloads', body)
  t.equal(first.status, 200)
  t.match(first.body, { status: 'UNLOADED', upstream: { code: '00' }, clientTxnId: body.clientTxnId, amount: String(AMOUNT), fee: String(FEE), ledgerTransactionId: /^\d+$/ })
  t.notOk('held' in first.body)
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })
  t.match((await call('POST', '/v1/unloads', body)).body, { status: 'UNLOADED', replayed: true })
  t.match((await call('GET', `/v1/unloads/${String(body.clientTxnId)}`)).body, { status: 'UNLOADED', urn: w.urn })
  t.equal((await call('POST', '/v1/unloads', { ...body, amount: '9999' })).status, 409, 'same clientTxnId, other amount')
  t.equal((await call('POST', '/v1/unloads', { ...body, beneficiaryId: 43 })).status, 409, 'same clientTxnId, other beneficiary')
  t.equal(sims.prepaid.faults.count('unload'), 1, 'sent once')
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })
  t.equal((await call('GET', '/v1/unloads/nope')).status, 404)
})

t.test('the platform declines: each family gives the hold back, nothing moves', async (t) => {
  const refusals = new Map<string, string>()
  const { sims, store, call } = await rig(t, { prepaid: { refusal: (_call, req) => refusals.get(String(req.clientTxnId)) } })
  const declines: Array<[string, string]> = [['6919', 'insufficient_funds'], ['1052', 'system'], ['7948', 'not_allowed'], ['1081', 'not_allowed'], ['1045', 'invalid_request']]
  for (const [code, family] of declines) {
    const w = await wallet(sims, store)
    const body = unloadBody(w)
    refusals.set(String(body.clientTxnId), code)
    const r = await call('POST', '/v1/unloads', body)
    t.equal(r.status, 200, family)
    t.match(r.body, { status: 'DECLINED', upstream: { code } }, `${code} (${family})`)
    t.notOk('held' in r.body)
    t.same(await balances(sims, store, w), { here: START, platform: START }, `${code}: nothing moved`)
    t.match((await call('POST', '/v1/unloads', body)).body, { status: 'DECLINED', replayed: true })
  }
  const w = await wallet(sims, store)
  const wrongAccount = await call('POST', '/v1/unloads', unloadBody(w, { accountNumber: 'ACC-OTHER' }))
  t.match(wrongAccount.body, { status: 'DECLINED', upstream: { code: '6905' } }, 'another sub-wallet: invalid_request')
  t.same(await balances(sims, store, w), { here: START, platform: START })

  // a customer the platform does not know
  await store.putCustomer('UNOWHERE', { customerId: 'CNOWHERE' })
  await store.credit('UNOWHERE', START, 'seed-UNOWHERE')
  const unknown = await call('POST', '/v1/unloads', unloadBody({ urn: 'UNOWHERE', customerId: 'CNOWHERE', accountNumber: 'ACC0' }))
  t.match(unknown.body, { status: 'DECLINED', upstream: { code: '6909' } }, 'unknown_party')
  t.equal((await store.getCustomer('UNOWHERE'))?.available, START)
})

t.test('credentials refused by the platform: declined, the hold given back', async (t) => {
  const { sims, store, call } = await rig(t, {}, { PREPAID_SECURE_CODE: 'not-the-platform-code' })
  const w = await wallet(sims, store)
  t.match((await call('POST', '/v1/unloads', unloadBody(w))).body, { status: 'DECLINED', upstream: { code: '1049' } })
  t.same(await balances(sims, store, w), { here: START, platform: START })
})

t.test('short of funds here: declined before anything is sent', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store, AMOUNT)
  const r = await call('POST', '/v1/unloads', unloadBody(w))
  t.match(r.body, { status: 'DECLINED', reason: 'INSUFFICIENT_FUNDS', upstream: null }, 'amount + fee is more than the balance')
  t.equal(sims.prepaid.faults.count('encrypt') + sims.prepaid.faults.count('unload'), 0, 'nothing sent')
  t.same(await balances(sims, store, w), { here: AMOUNT, platform: AMOUNT })
})

t.test('a timeout before the platform acted: held, then the repeat unloads', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store)
  const body = unloadBody(w)
  sims.prepaid.faults.set('unload', { hang: true, times: 1 })
  const first = await call('POST', '/v1/unloads', body)
  t.equal(first.status, 502)
  t.match(first.body, { status: 'FAILED', retryable: true, held: true })
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START }, 'held here, not spendable')
  t.match((await call('GET', `/v1/unloads/${String(body.clientTxnId)}`)).body, { status: 'PENDING', held: true })
  t.match((await call('POST', '/v1/unloads', body)).body, { status: 'UNLOADED' })
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })
})

t.test('a timeout after the platform acted: the repeat meets 1054 and keeps the hold for reconciliation', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store)
  const body = unloadBody(w)
  sims.prepaid.faults.set('unload', { hang: true, phase: 'after', times: 1 })
  t.match((await call('POST', '/v1/unloads', body)).body, { status: 'FAILED', retryable: true, held: true })
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })
  const again = await call('POST', '/v1/unloads', body)
  t.equal(again.status, 502, 'FAILED is always 502')
  t.match(again.body, { status: 'FAILED', retryable: false, held: true, upstream: { code: '1054' } })
  t.type(again.body.reconcile, 'string')
  t.match((await call('POST', '/v1/unloads', body)).body, { status: 'FAILED', replayed: true, held: true })
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE }, 'both sides moved once')
})

t.test('garbage answers: the unload call, Decrypt and Encrypt', async (t) => {
  const { sims, store, call } = await rig(t)

  const a = await wallet(sims, store)
  const unreadable = unloadBody(a)
  sims.prepaid.faults.set('unload', { malformed: 'json', phase: 'after', times: 1 })
  const first = await call('POST', '/v1/unloads', unreadable)
  t.equal(first.status, 502)
  t.match(first.body, { status: 'FAILED', retryable: true, held: true })
  t.match((await call('POST', '/v1/unloads', unreadable)).body, { status: 'FAILED', retryable: false, upstream: { code: '1054' } })
  t.same(await balances(sims, store, a), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })

  const b = await wallet(sims, store)
  const undecrypted = unloadBody(b)
  const sent = sims.prepaid.faults.count('unload')
  sims.prepaid.faults.set('decrypt', { malformed: 'schema', times: 1 })
  t.match((await call('POST', '/v1/unloads', undecrypted)).body, { status: 'FAILED', retryable: true, held: true })
  t.match((await call('POST', '/v1/unloads', undecrypted)).body, { status: 'UNLOADED' }, 'the kept answer is decrypted again')
  t.equal(sims.prepaid.faults.count('unload') - sent, 1, 'the unload was not sent again')
  t.same(await balances(sims, store, b), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })

  const c = await wallet(sims, store)
  const unencrypted = unloadBody(c)
  sims.prepaid.faults.set('encrypt', { malformed: 'json', times: 1 })
  const refused = await call('POST', '/v1/unloads', unencrypted)
  t.equal(refused.status, 502)
  t.match(refused.body, { status: 'FAILED', retryable: true })
  t.notOk('held' in refused.body, 'nothing was sent: the hold is given back')
  t.same(await balances(sims, store, c), { here: START, platform: START })
  t.match((await call('POST', '/v1/unloads', unencrypted)).body, { status: 'UNLOADED' })
  t.same(await balances(sims, store, c), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })
})

t.test('concurrent repeats of one clientTxnId: moved once', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store)
  const body = unloadBody(w)
  // the first call is slow at the platform, so the others arrive while it holds the reference
  sims.prepaid.faults.set('unload', { delayMs: 300, times: 1 })
  const answers = await Promise.all(Array.from({ length: 8 }, async () => await call('POST', '/v1/unloads', body)))
  const statuses = answers.map((a) => a.status === 409 ? String(a.body.error) : String(a.body.status))
  t.ok(statuses.every((s) => s === 'UNLOADED' || s === 'IN_PROGRESS'), statuses.join(','))
  t.ok(statuses.includes('UNLOADED'))
  t.match((await call('POST', '/v1/unloads', body)).body, { status: 'UNLOADED', replayed: true })
  t.equal(sims.prepaid.faults.count('unload'), 1, 'sent once')
  t.same(await balances(sims, store, w), { here: START - AMOUNT - FEE, platform: START - AMOUNT - FEE })
})

t.test('fields are checked before anything is held or sent', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store)
  const bad: Array<[string, Record<string, unknown>]> = [
    ['sourceType 2', { sourceType: 2 }],
    ['sourceType as a string', { sourceType: '1' }],
    ['a fractional amount', { amount: '10.5' }],
    ['amount 0', { amount: '0' }],
    ['a negative fee', { fee: -1 }],
    ['beneficiaryId as a string', { beneficiaryId: '42' }],
    ['a mobile without country code digits', { customerMobile: '98-00' }],
    ['no receiver', { receiver: undefined }],
    ['an empty implType', { implType: '' }],
    ['reservedField1 not an object', { reservedField1: 'x' }],
    ['an extra field over a field of the spec', { extra: { messageCode: 1 } }],
    ['an unknown field', { currency: '356' }]
  ]
  for (const [what, change] of bad) {
    const r = await call('POST', '/v1/unloads', unloadBody(w, change))
    t.equal(r.status, 400, what)
    t.match(r.body, { error: /^(VALIDATION|BAD_REQUEST)$/ }, what)
  }
  t.equal(sims.prepaid.faults.count('encrypt'), 0, 'nothing sent')
  t.same(await balances(sims, store, w), { here: START, platform: START }, 'nothing held')
  const zeroFee = await call('POST', '/v1/unloads', unloadBody(w, { fee: 0, reservedField1: { note: 'x' }, extra: { currency: '356' } }))
  t.match(zeroFee.body, { status: 'UNLOADED', fee: '0' }, 'a zero fee, reservedField1 and agreed extra fields are fine')
  t.same(await balances(sims, store, w), { here: START - AMOUNT, platform: START - AMOUNT })
})

t.test('without PREPAID_UNLOAD_PATH unloads are not configured', async (t) => {
  const { sims, store, call } = await rig(t, {}, { PREPAID_UNLOAD_PATH: '' })
  const w = await wallet(sims, store)
  const r = await call('POST', '/v1/unloads', unloadBody(w))
  t.equal(r.status, 503)
  t.match(r.body, { error: 'NOT_CONFIGURED' })
})

t.test('the customerId sent is the customer\'s own unless the call names one; an unknown urn is 404', async (t) => {
  const { sims, store, call } = await rig(t)
  const w = await wallet(sims, store)
  await store.putCustomer('UNOID', {})
  await store.credit('UNOID', START, 'seed-UNOID')
  const noId = await call('POST', '/v1/unloads', unloadBody({ urn: 'UNOID', customerId: '', accountNumber: w.accountNumber }))
  t.equal(noId.status, 409)
  t.match(noId.body, { error: 'WRONG_STATE' })
  t.equal((await store.getCustomer('UNOID'))?.available, START, 'nothing held')
  // the platform knows the wallet by customerId: naming it unloads from that wallet
  const named = await call('POST', '/v1/unloads', unloadBody({ urn: 'UNOID', customerId: '', accountNumber: w.accountNumber }, { customerId: w.customerId }))
  t.match(named.body, { status: 'UNLOADED' })
  t.equal(sims.prepaid.wallets.customer(w.urn)?.balance, START - AMOUNT - FEE)
  t.equal((await call('POST', '/v1/unloads', unloadBody({ urn: 'NOSUCHURN', customerId: '', accountNumber: 'A' }))).status, 404)
})
