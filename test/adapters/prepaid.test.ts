import t from 'tap'
import Fastify from 'fastify'
import { createPrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import type { PrepaidAdapter, PrepaidOptions, TransferInput } from '../../src/adapters/prepaid/adapter.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import type { PrepaidSim, PrepaidSimOptions } from '../../src/sim/prepaid-sim.js'
import { elapsedMs, listen, PREPAID_CREDS, quietLogger } from './fixtures/setup.js'
import type { Teardown } from './fixtures/setup.js'

const ALICE = { urn: '90000000001', customerId: 'CUST0001', accountNumber: '10000000001', balance: 100_000 }
const BOB = { urn: '90000000002', customerId: 'CUST0002', accountNumber: '10000000002', balance: 5_000 }

interface Rig { sim: PrepaidSim, pp: PrepaidAdapter, url: string }

async function rig (t: Teardown, simOpts: Partial<PrepaidSimOptions> = {}, ppOpts: Partial<PrepaidOptions> = {}): Promise<Rig> {
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, customers: [ALICE, BOB], ...simOpts })
  const url = await listen(sim.app)
  const pp = createPrepaidAdapter({ ...PREPAID_CREDS, entityId: '5678', baseUrl: url, ...ppOpts }, { logger: quietLogger() })
  t.teardown(async () => {
    await pp.close()
    await sim.app.close()
  })
  return { sim, pp, url }
}

function move (clientTxnId: string, amount: number): TransferInput {
  return {
    clientTxnId,
    amount,
    from: { urn: ALICE.urn, accountNumber: ALICE.accountNumber },
    to: { customerId: BOB.customerId, accountNumber: BOB.accountNumber }
  }
}

t.test('the wire: fundTransfer headers, x-api-key on Encrypt and Decrypt', async (t) => {
  const seen: Array<{ url: string, headers: Record<string, unknown>, body: unknown }> = []
  const app = Fastify()
  app.post('/*', async (request) => {
    seen.push({ url: request.url, headers: request.headers, body: request.body })
    return { token: 'opaque-token' }
  })
  const url = await listen(app)
  const pp = createPrepaidAdapter({ ...PREPAID_CREDS, entityId: '5678', baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await pp.close(); await app.close() })
  t.same(await pp.fundTransfer('request-token'), { kind: 'ok', token: 'opaque-token' })
  await pp.encrypt({ a: 1 })
  const [transfer, encrypt] = seen
  t.equal(transfer?.url, '/uat/sbx/api/onboarding/v2/fundTransfer')
  t.match(transfer?.headers, {
    'x-consumer-custom-id': PREPAID_CREDS.consumerKey,
    bankid: PREPAID_CREDS.bankId,
    clientid: PREPAID_CREDS.clientId,
    'content-type': 'application/json',
    entityid: '5678',
    securecode: PREPAID_CREDS.secureCode,
    'x-api-key': PREPAID_CREDS.apiKey
  })
  t.same(transfer?.body, { token: 'request-token' })
  t.equal(encrypt?.url, '/api/v2/encrypt')
  t.equal(encrypt?.headers['x-api-key'], PREPAID_CREDS.apiKey)
  t.notOk('securecode' in (encrypt?.headers ?? {}), 'the secure code goes to fundTransfer only')
})

t.test('transfer: encrypt, fundTransfer, decrypt; the money moves once', async (t) => {
  const { sim, pp } = await rig(t)
  const r = await pp.transfer(move('TXN-1', 2_500))
  t.match(r, {
    kind: 'ok',
    clientTxnId: 'TXN-1',
    transactionAmount: 2_500,
    availableBalance: 97_500,
    urn: ALICE.urn,
    senders: [{ urn: ALICE.urn, availableBalance: 97_500, transactionAmount: 2_500 }],
    receivers: [{ urn: BOB.urn, customerId: BOB.customerId, availableBalance: 7_500 }]
  })
  if (r.kind === 'ok') t.match(r.ledgerTransactionId, /^\d{10}$/, 'a number on the wire, a string in the result')
  t.equal(sim.wallets.customer(ALICE.urn)?.balance, 97_500)
  t.equal(sim.wallets.customer(BOB.urn)?.balance, 7_500)
})

t.test('encrypt and decrypt are inverse; fundTransfer takes and gives tokens', async (t) => {
  const { sim, pp } = await rig(t)
  const plain = { messageCode: 3450, clientTxnId: 'U-1', transactionAmount: 525 }
  const sealed = await pp.encrypt(plain)
  t.match(sealed, { kind: 'ok', token: /^[\w-]{40,}$/ })
  if (sealed.kind !== 'ok') return
  t.same(sim.open(sealed.token), plain, 'the platform can read what Encrypt made')
  t.same(await pp.decrypt(sealed.token), { kind: 'ok', payload: plain })

  const request = sim.seal({ messageCode: '3460', clientTxnId: 'RAW-1', requestDateTime: '20261121093015',
    senders: [{ urn: ALICE.urn, accountNumber: ALICE.accountNumber, transactionAmount: 100 }],
    receivers: [{ urn: BOB.urn, accountNumber: BOB.accountNumber, transactionAmount: 100 }] })
  const answer = await pp.fundTransfer(request)
  t.match(answer, { kind: 'ok', token: /\w+/ })
  if (answer.kind === 'ok') t.match(sim.open(answer.token), { responseCode: '00', clientTxnId: 'RAW-1', transactionAmount: 100 })
})

t.test('declines from the wallet table', async (t) => {
  const { sim, pp, url } = await rig(t)
  t.match(await pp.transfer({ ...move('D-1', 100), from: { urn: '99999999999', accountNumber: '1' } }),
    { kind: 'declined', code: '1107', description: 'SENDER CARD NOT FOUND', family: 'unknown_party', clientTxnId: 'D-1' })
  t.match(await pp.transfer({ ...move('D-2', 100), from: { customerId: 'NOPE', accountNumber: '1' } }), { kind: 'declined', code: '6909', family: 'unknown_party' })
  t.match(await pp.transfer({ ...move('D-3', 100), to: { urn: '99999999998', accountNumber: '1' } }), { kind: 'declined', code: '1110', family: 'unknown_party' })
  t.match(await pp.transfer({ ...move('D-4', 100), to: { customerId: 'NOPE', accountNumber: '1' } }), { kind: 'declined', code: '6910' })
  t.match(await pp.transfer({ ...move('D-9', 100), to: { customerId: ALICE.customerId, accountNumber: ALICE.accountNumber } }),
    { kind: 'declined', code: '1081', family: 'not_allowed' }, 'not between wallets of one customer')
  t.match(await pp.transfer(move('D-5', 100_001)), { kind: 'declined', code: '6919', family: 'insufficient_funds', retryable: false })
  t.equal(sim.wallets.customer(ALICE.urn)?.balance, ALICE.balance, 'a decline moves nothing')

  t.match(await pp.transfer(move('D-6', 1_000)), { kind: 'ok' })
  t.match(await pp.transfer(move('D-6', 1_000)), { kind: 'declined', code: '1054', family: 'duplicate' })
  t.equal(sim.wallets.customer(ALICE.urn)?.balance, ALICE.balance - 1_000, 'moved once')

  const wrongCode = createPrepaidAdapter({ ...PREPAID_CREDS, secureCode: 'wrong', baseUrl: url }, { logger: quietLogger() })
  const wrongKey = createPrepaidAdapter({ ...PREPAID_CREDS, apiKey: 'wrong', baseUrl: url }, { logger: quietLogger() })
  const wrongBank = createPrepaidAdapter({ ...PREPAID_CREDS, bankId: '9999', baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await wrongCode.close(); await wrongKey.close(); await wrongBank.close() })
  t.match(await wrongCode.transfer(move('D-7', 1)), { kind: 'declined', code: '1049', description: 'INVALID SECURE CODE', family: 'credentials' })
  t.match(await wrongKey.encrypt({ a: 1 }), { kind: 'declined', code: '406', family: 'credentials' })
  t.match(await wrongBank.transfer(move('D-8', 1)), { kind: 'declined', code: '1031', family: 'credentials' })
})

t.test('timeouts: before fundTransfer nothing was sent; after it, the outcome is unknown', async (t) => {
  // long enough for the calls that must answer on a loaded machine, short enough for the ones that hang
  const { sim, pp } = await rig(t, {}, { headersTimeoutMs: 600 })
  sim.faults.set('encrypt', { hang: true, times: 1 })
  const started = performance.now()
  t.match(await pp.transfer(move('T-1', 100)), { kind: 'failed', reason: 'timeout', sent: false, retryable: true })
  t.ok(elapsedMs(started) < 2000)
  t.equal(sim.faults.count('fundTransfer'), 0)

  sim.faults.set('fundTransfer', { hang: true, phase: 'after', times: 1 })
  t.match(await pp.transfer(move('T-2', 100)), { kind: 'failed', reason: 'timeout', sent: true, attempts: 1 })
  t.equal(sim.faults.count('fundTransfer'), 1, 'not repeated')
  t.equal(sim.wallets.customer(ALICE.urn)?.balance, ALICE.balance - 100, 'the platform had moved the money')
  t.match(await pp.transfer(move('T-2', 100)), { kind: 'declined', code: '1054' }, 'repeating with the same clientTxnId cannot move it twice')
})

t.test('malformed and unreadable answers', async (t) => {
  const { sim, pp } = await rig(t)
  sim.faults.set('decrypt', { malformed: 'json', times: 1 })
  t.match(await pp.transfer(move('M-1', 100)), { kind: 'failed', reason: 'malformed', sent: true, retryable: true, detail: /^decrypt/ })
  t.equal(sim.wallets.customer(ALICE.urn)?.balance, ALICE.balance - 100)

  sim.faults.set('encrypt', { malformed: 'schema', times: 1 })
  t.match(await pp.encrypt({ a: 1 }), { kind: 'failed', reason: 'malformed', retryable: true })
  t.match(await pp.decrypt('not-a-token-at-all'), { kind: 'ok', payload: { responseCode: '1051' } },
    'Decrypt answers with plaintext whatever it holds')

  sim.faults.set('fundTransfer', { reset: true, times: 1 })
  t.match(await pp.transfer(move('M-2', 100)), { kind: 'failed', reason: 'transport', sent: true, attempts: 1 })
  t.equal(sim.faults.count('fundTransfer'), 2, 'the cut request was not repeated')
})

t.test('bad input is a typed error and nothing is sent', async (t) => {
  const { sim, pp } = await rig(t)
  await t.rejects(pp.transfer(move('B-1', 10.5)), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST' })
  await t.rejects(pp.transfer({ ...move('B-2', 10), from: { urn: ALICE.urn, customerId: ALICE.customerId, accountNumber: '1' } }), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST' })
  await t.rejects(pp.fundTransfer(''), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST' })
  t.same(sim.faults.allCounts(), { encrypt: 0, decrypt: 0, fundTransfer: 0, unload: 0 })
})

const UNLOAD = {
  clientTxnId: 'UL-1',
  customerId: ALICE.customerId,
  accountNumber: ALICE.accountNumber,
  amount: 2_000,
  fee: 25,
  receiver: 'ALICE',
  sourceType: 1,
  fundFlowType: 'UNLOAD',
  implId: 'IMPL01',
  implType: 'BANK',
  beneficiaryId: 7
}

t.test('unload: the spec\'s 3450 plaintext, the prepaid headers on the configured path, the answer decrypted', async (t) => {
  const seen: Array<{ url: string, headers: Record<string, unknown>, body: unknown }> = []
  const app = Fastify()
  app.post('/*', async (request) => {
    seen.push({ url: request.url, headers: request.headers, body: request.body })
    if (request.url === '/api/v2/decrypt') return { messageCode: 3450, clientTxnId: 'UL-1', responseCode: '00', ledgerTransactionId: 1000000007, transactionAmount: 2000 }
    return { token: `t${seen.length}` }
  })
  const url = await listen(app)
  const pp = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: url, unloadPath: '/ops/unload' }, { logger: quietLogger() })
  t.teardown(async () => { await pp.close(); await app.close() })
  const r = await pp.unload({ ...UNLOAD, customerMobile: '919800000001', reservedField1: { a: 1 }, requestDateTime: new Date(Date.UTC(2026, 10, 21, 9, 30, 15)) })
  t.match(r, { kind: 'ok', clientTxnId: 'UL-1', ledgerTransactionId: '1000000007', transactionAmount: 2000 })
  const [encrypt, unload, decrypt] = seen
  t.same(encrypt?.body, {
    messageCode: 3450, clientTxnId: 'UL-1', requestDateTime: '20261121093015', customerId: ALICE.customerId, accountNumber: ALICE.accountNumber,
    transactionAmount: 2000, receiver: 'ALICE', sourceType: 1, fundFlowType: 'UNLOAD', implId: 'IMPL01', implType: 'BANK', beneficiaryId: 7, fee: 25,
    customerMobile: '919800000001', reservedField1: { a: 1 }
  })
  t.equal(unload?.url, '/ops/unload')
  t.match(unload?.headers, { 'x-consumer-custom-id': PREPAID_CREDS.consumerKey, securecode: PREPAID_CREDS.secureCode, clientid: PREPAID_CREDS.clientId, bankid: PREPAID_CREDS.bankId })
  t.same(unload?.body, { token: 't1' })
  t.same(decrypt?.body, { token: 't2' })
})

t.test('unload against the simulator; a kept answer token is read again without sending', async (t) => {
  const { sim, pp } = await rig(t, { unloadPath: '/ops/unload' }, { unloadPath: '/ops/unload' })
  sim.faults.set('decrypt', { status: 503, times: 1 })
  const lost = await pp.unload(UNLOAD)
  t.match(lost, { kind: 'failed', sent: true, retryable: true, responseToken: /\w+/ })
  t.equal(sim.wallets.customer(ALICE.urn)?.balance, ALICE.balance - 2_025, 'the platform took amount + fee')
  if (lost.kind !== 'failed' || lost.responseToken === undefined) return
  t.match(await pp.readUnload(lost.responseToken, 'UL-1'), { kind: 'ok', clientTxnId: 'UL-1' })
  t.match(await pp.readUnload(lost.responseToken, 'UL-OTHER'), { kind: 'failed', reason: 'malformed' }, 'an answer to another clientTxnId is not ours')
  t.equal(sim.faults.count('unload'), 1)
  t.match(await pp.unload(UNLOAD), { kind: 'declined', code: '1054', family: 'duplicate' })
  t.match(await pp.unload({ ...UNLOAD, clientTxnId: 'UL-2', amount: 1_000_000 }), { kind: 'declined', code: '6919', family: 'insufficient_funds' })
})

t.test('unload: fields are checked before anything is sent; no path, no unload', async (t) => {
  const { sim, pp } = await rig(t, {}, { unloadPath: '/ops/unload' })
  for (const bad of [{ sourceType: 2 }, { amount: 1.5 }, { fee: -1 }, { beneficiaryId: 1.5 }, { receiver: '' }, { customerMobile: '0abc' },
    { reservedField1: [] as unknown as Record<string, unknown> }, { extra: { fee: 0 } }, { clientTxnId: 'x'.repeat(101) }]) {
    await t.rejects(pp.unload({ ...UNLOAD, ...bad }), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST' }, JSON.stringify(bad))
  }
  t.equal(sim.faults.count('encrypt'), 0)
  const { pp: noPath } = await rig(t)
  t.equal(noPath.unloads, false)
  await t.rejects(noPath.unload(UNLOAD), { code: 'EXTAUTH_ERR_ADAPTER_OPTION' })
})
