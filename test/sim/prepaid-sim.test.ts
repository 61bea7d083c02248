import { createDecipheriv } from 'node:crypto'
import t from 'tap'
import { PREPAID_PATHS } from './fixtures/spec.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { listen, PREPAID_CREDS } from '../adapters/fixtures/setup.js'
import { get, post } from './fixtures/http.js'

const KEY_HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'
const HEADERS = {
  'X-Consumer-Custom-ID': PREPAID_CREDS.consumerKey,
  bankId: PREPAID_CREDS.bankId,
  clientId: PREPAID_CREDS.clientId,
  entityId: '5678',
  secureCode: PREPAID_CREDS.secureCode,
  'x-api-key': PREPAID_CREDS.apiKey
}

async function started (t: { teardown (fn: () => unknown): void }) {
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, key: KEY_HEX })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())
  return { sim, url }
}

t.test('tokens are AES-256-GCM under the configured key', async (t) => {
  const { url } = await started(t)
  const plain = { messageCode: 3450, clientTxnId: 'ENC-1', transactionAmount: 525 }
  const enc = await post(url + PREPAID_PATHS.encrypt, plain, { 'x-api-key': PREPAID_CREDS.apiKey })
  t.match(enc, { status: 200, body: { token: /^[\w-]+$/ } })
  const raw = Buffer.from(enc.body.token, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(KEY_HEX, 'hex'), raw.subarray(0, 12))
  decipher.setAuthTag(raw.subarray(12, 28))
  const opened = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
  t.same(JSON.parse(opened), plain, 'iv | tag | ciphertext, opened independently')

  t.same((await post(url + PREPAID_PATHS.decrypt, { token: enc.body.token }, { 'x-api-key': PREPAID_CREDS.apiKey })).body, plain)
  // one bit of the ciphertext flipped (editing the text's last characters may touch only base64's unused bits)
  const flipped = Buffer.from(raw)
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1
  const tampered = flipped.toString('base64url')
  t.match((await post(url + PREPAID_PATHS.decrypt, { token: tampered }, { 'x-api-key': PREPAID_CREDS.apiKey })).body, { responseCode: '1051' })
  t.match((await post(url + PREPAID_PATHS.decrypt, {}, { 'x-api-key': PREPAID_CREDS.apiKey })).body, { responseCode: '1055' })
  t.match((await post(url + PREPAID_PATHS.encrypt, plain)).body, { responseCode: '406' }, 'x-api-key required')
  t.throws(() => buildPrepaidSim({ ...PREPAID_CREDS, key: 'short' }), /32 bytes/)
})

t.test('fundTransfer header checks, in the table codes', async (t) => {
  const { sim, url } = await started(t)
  const token = sim.seal({ clientTxnId: 'H-1' })
  const without = (name: keyof typeof HEADERS): Record<string, string> => {
    const h: Record<string, string> = { ...HEADERS }
    delete h[name]
    return h
  }
  const transfer = url + PREPAID_PATHS.fundTransfer
  t.match((await post(transfer, { token }, without('clientId'))).body, { responseCode: '1262', responseMessage: 'CLIENT ID NOT PRESENT IN THE REQUEST' })
  t.match((await post(transfer, { token }, without('bankId'))).body, { responseCode: '1264' })
  t.match((await post(transfer, { token }, without('X-Consumer-Custom-ID'))).body, { responseCode: '1310' })
  t.match((await post(transfer, { token }, without('secureCode'))).body, { responseCode: '1311' })
  t.match((await post(transfer, { token }, { ...HEADERS, secureCode: 'nope' })).body, { responseCode: '1049', responseMessage: 'INVALID SECURE CODE' })
  t.match((await post(transfer, { token }, { ...HEADERS, 'x-api-key': 'nope' })).body, { responseCode: '406' })
  t.match((await post(transfer, { token: 'garbage' }, HEADERS)).body, { responseCode: '1051' })
  const ok = await post(transfer, { token }, HEADERS)
  t.match(sim.open(ok.body.token), { responseCode: '303193' }, 'headers pass; the request itself has no messageCode')
})

t.test('transfer rules on the decrypted request', async (t) => {
  const { sim, url } = await started(t)
  sim.wallets.add({ urn: '1', customerId: 'C1', accountNumber: 'A1', balance: 1_000 })
  sim.wallets.add({ urn: '2', customerId: 'C2', accountNumber: 'A2', balance: 0 })
  const base = { messageCode: '3460', clientTxnId: 'W-1', requestDateTime: '20261121093015' }
  const leg = (o: Record<string, unknown>) => ({ accountNumber: 'A1', transactionAmount: 100, ...o })
  const cases: Array<[string, Record<string, unknown>]> = [
    ['1320', { ...base, requestDateTime: undefined }],
    ['303178', { ...base, requestDateTime: '202611210930150' }],
    ['1088', { ...base, requestDateTime: '2026-11-210930' }],
    ['1093', { ...base, clientTxnId: '' }],
    ['1055', { ...base, senders: [], receivers: [] }],
    ['6917', { ...base, senders: [leg({ urn: '1', customerId: 'C1' })], receivers: [leg({ urn: '2', accountNumber: 'A2' })] }],
    ['6900', { ...base, senders: [leg({ urn: '1', accountNumber: '' })], receivers: [leg({ urn: '2', accountNumber: 'A2' })] }],
    ['6921', { ...base, senders: [leg({ urn: '1', transactionAmount: 1.5 })], receivers: [leg({ urn: '2', accountNumber: 'A2' })] }],
    ['1104', { ...base, senders: [leg({ urn: '1' })], receivers: [leg({ urn: '2', accountNumber: 'A2', transactionAmount: 99 })] }],
    ['6902', { ...base, senders: [leg({ urn: '1', accountNumber: 'A9' })], receivers: [leg({ urn: '2', accountNumber: 'A2' })] }],
    ['1081', { ...base, senders: [leg({ urn: '1' })], receivers: [leg({ customerId: 'C1' })] }],
    ['6919', { ...base, senders: [leg({ urn: '1', transactionAmount: 1_001 })], receivers: [leg({ urn: '2', accountNumber: 'A2', transactionAmount: 1_001 })] }]
  ]
  for (const [code, req] of cases) {
    const res = await post(url + PREPAID_PATHS.fundTransfer, { token: sim.seal(req) }, HEADERS)
    t.match(sim.open(res.body.token), { responseCode: code, clientId: PREPAID_CREDS.clientId, bankId: 1234 }, `code ${code}`)
  }
  t.equal(sim.wallets.customer('1')?.balance, 1_000, 'none of them moved money')
})

t.test('wallets seeded and read over the control routes', async (t) => {
  const { url } = await started(t)
  t.equal((await post(`${url}/__sim/customers`, { urn: '77', customerId: 'C77', accountNumber: 'A77', balance: 4_200 })).status, 204)
  t.same((await get(`${url}/__sim/customers/77`)).body, { urn: '77', customerId: 'C77', accountNumber: 'A77', balance: 4_200 })
  t.equal((await post(`${url}/__sim/customers`, { urn: '78', customerId: 'C78', accountNumber: 'A78', balance: 1.5 })).status, 400, 'minor units only')
  t.equal((await get(`${url}/__sim/customers/78`)).status, 404)
})

t.test('the Unload rules of the simulator, from the spec\'s Encrypt table', async (t) => {
  const { WalletBook } = await import('../../src/sim/wallet-book.js')
  const book = new WalletBook([{ urn: 'U1', customerId: 'C1', accountNumber: 'A1', balance: 1000 }])
  const ctx = { clientId: 'CL', bankId: '1234', responseDateTime: '20261121093015' }
  const ok = {
    messageCode: 3450, clientTxnId: 'X1', requestDateTime: '20261121093015', customerId: 'C1', accountNumber: 'A1', transactionAmount: 500,
    receiver: 'R', sourceType: 0, fundFlowType: 'F', implId: 'I', implType: 'T', beneficiaryId: 1, fee: 10
  }
  const code = (change: Record<string, unknown>): unknown => book.unload({ ...ok, clientTxnId: `X${Math.random()}`, ...change }, ctx).responseCode
  t.equal(code({ messageCode: 3460 }), '1030', 'not the Unload messageCode')
  t.equal(code({ messageCode: '' }), '303193')
  t.equal(code({ requestDateTime: undefined }), '1320')
  t.equal(code({ requestDateTime: '202611210930150' }), '303178')
  t.equal(code({ requestDateTime: '2026112109301x' }), '1088')
  t.equal(code({ sourceType: 2 }), '6920')
  t.equal(code({ sourceType: '0' }), '6920', 'an integer, not a string')
  t.equal(code({ transactionAmount: 0 }), '6921')
  t.equal(code({ transactionAmount: '500' }), '6921')
  t.equal(code({ fee: -1 }), '6936')
  t.equal(code({ beneficiaryId: '1' }), '1055')
  t.equal(code({ receiver: '' }), '1055')
  t.equal(code({ reservedField1: 'x' }), '6911')
  t.equal(code({ accountNumber: '' }), '6900')
  t.equal(code({ accountNumber: 'A2' }), '6905')
  t.equal(code({ customerId: 'C9' }), '6909')
  t.equal(code({ transactionAmount: 991 }), '6919', 'amount + fee over the balance')
  t.equal(book.customer('U1')?.balance, 1000, 'no refusal moved money')
  t.match(book.unload(ok, ctx), { responseCode: '00', clientTxnId: 'X1', customerId: 'C1', transactionAmount: 500, fee: 10, availableBalance: 490 })
  t.equal(book.unload(ok, ctx).responseCode, '1054', 'a clientTxnId is used once')
  t.equal(book.customer('U1')?.balance, 490)
})
