// The prepaid platform's books: what it did downstream of extauth's answers, posted once each, and the statement
// of a period in extauth-v1, every line of which extauth's own reader accepts.
import Fastify from 'fastify'
import t from 'tap'
import { request } from 'undici'
import { checkPosting } from '../../src/settlement/statement-reader.js'
import { manualClock } from '../../src/sim/clock.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import type { AuthRequest } from '../../src/domain/request.js'
import { listen, PREPAID_CREDS } from '../adapters/fixtures/setup.js'
import { get, post } from './fixtures/http.js'

const auth = (ref: string, amount: string, extra: Partial<AuthRequest> = {}): AuthRequest => ({
  urn: 'U1', last4Digits: '4321', terminalId: 'T1', systemTraceAuditNumber: '000001', cardNetwork: 'RUPAY', channel: 'POS',
  transactionAmount: amount, transactionReferenceNumber: ref, currencyCode: '356', mcc: '5411', ...extra
} as AuthRequest)
const answered = (code: string) => ({ kind: 'answer' as const, status: 200, body: { responseCode: code }, ms: 1 })

t.test('each action posts once, moves the wallet, and the statement reads as extauth-v1', async (t) => {
  const clock = manualClock(Date.parse('2026-11-20T10:00:00Z'))
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, now: clock.now, customers: [{ urn: 'U1', customerId: 'C1', accountNumber: 'A1', balance: 100_000 }] })
  t.teardown(() => sim.app.close())
  const { purchases, wallets } = sim
  purchases.record(auth('R1', '10000'), answered('00'))
  purchases.record(auth('R2', '5000', { fee: '100' }), answered('00'))
  purchases.record(auth('R3', '2000'), answered('00'))
  purchases.record(auth('R4', '3000'), answered('51'))
  purchases.record(auth('R5', '700'), { kind: 'error', code: 'UND_ERR_HEADERS_TIMEOUT', ms: 2000 })
  purchases.record(auth('R6', '900', { billingCurrency: '840', billingAmount: '12' }), answered('00'))
  t.equal(purchases.get('U1', 'R2')?.authorized, 5100, 'the fee is authorized with the amount')
  t.equal(purchases.get('U1', 'R6')?.authorized, 12, 'the billed amount is what is held')
  t.equal(purchases.held('U1'), 10000 + 5100 + 2000 + 12, 'open approvals are held on the platform')

  purchases.clear('U1', 'R1', 9000)
  clock.advance(1000)
  purchases.cancel('U1', 'R2')
  purchases.neverComplete('U1', 'R3')
  purchases.cancel('U1', 'R5')
  purchases.refund('U1', 'R1', 4000)
  purchases.forcePost('U1', '4321', 'OFF-1', 300)
  purchases.fee('U1', 'FEE-1', 50)
  clock.advance(1000)
  purchases.clear('U1', 'R6')
  t.throws(() => purchases.refund('U1', 'R1', 5001), /more than 5000/, 'no refund past what was cleared')
  t.throws(() => purchases.clear('U1', 'R4'), /declined/, 'a declined authorization never clears')
  t.throws(() => purchases.cancel('U1', 'R3'), /never_completed/)
  t.throws(() => purchases.forcePost('U1', '4321', 'R1', 1), /authorized/)
  t.throws(() => purchases.fee('NOPE', 'F', 1), /no wallet/)
  t.equal(sim.journal.postings().length, 7, 'nothing posted by a refused action')
  t.equal(wallets.customer('U1')?.balance, 100_000 - 9000 + 4000 - 300 - 50 - 12)
  t.equal(purchases.held('U1'), 2000, 'only the one never completed')

  const url = await listen(sim.app)
  const res = await request(`${url}/__sim/statement?id=D-1&from=2026-11-20T10:00:00Z&to=2026-11-20T10:00:02Z`)
  t.match(res.headers['content-type'], /application\/x-ndjson/)
  const [header, ...lines] = (await res.body.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.same(header, { statement: { id: 'D-1', from: '2026-11-20T10:00:00.000Z', to: '2026-11-20T10:00:02.000Z', complete: true } })
  t.same(lines.map((l) => [l.type, l.reference, l.amount]), [
    ['purchase', 'R1', '9000'], ['reversal', 'R2', '5100'], ['reversal', 'R5', '700'], ['refund', 'R1', '4000'], ['purchase', 'OFF-1', '300'], ['fee', 'FEE-1', '50']
  ], 'the period leaves out the clearing posted at its end')
  for (const l of lines) t.type(checkPosting(l), 'object', `extauth reads ${String(l.platformId)}`)
  t.equal(new Set(lines.map((l) => l.platformId)).size, lines.length, 'platformIds unique')
  t.equal(lines.find((l) => l.type === 'fee')?.last4, undefined, 'a fee without a card leaves last4 out')

  const books = await get(`${url}/__sim/books`)
  t.same(books.body.customers, [{ urn: 'U1', balance: String(wallets.customer('U1')?.balance), held: '2000' }])
  t.equal((await get(`${url}/__sim/statement?from=later`)).status, 400)
})

t.test('the routes: authorizations sent to extauth and booked, actions, force posts and fees', async (t) => {
  const extauth = Fastify()
  extauth.post('/api/v1/externalAuth', async (req) => ({ responseCode: (req.body as { transactionAmount: string }).transactionAmount === '999' ? '51' : '00' }))
  const extauthUrl = await extauth.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => extauth.close())
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, customers: [{ urn: 'U1', customerId: 'C1', accountNumber: 'A1', balance: 10_000 }], extauth: { url: extauthUrl, consumerKey: 'k', clientId: 'c', bankId: '1234' } })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())

  t.match(await post(`${url}/__sim/authorizations`, auth('A1', '1500')), { status: 200, body: { answer: { responseCode: '00' }, booked: { state: 'open', authorized: 1500 } } })
  t.match(await post(`${url}/__sim/authorizations`, auth('A2', '999')), { status: 200, body: { booked: { state: 'declined', code: '51' } } })
  t.equal((await post(`${url}/__sim/authorizations`, { urn: 'U1' })).status, 400)
  t.match(await post(`${url}/__sim/authorizations/A1/clear`, { urn: 'U1', amount: '1600' }), { status: 200, body: { posting: { type: 'purchase', amount: 1600 } } })
  t.match(await post(`${url}/__sim/authorizations/A1/refund`, { urn: 'U1', amount: '100' }), { status: 200, body: { posting: { type: 'refund' } } })
  t.equal((await post(`${url}/__sim/authorizations/A2/clear`, { urn: 'U1' })).status, 409, 'a decline does not clear')
  t.equal((await post(`${url}/__sim/authorizations/A1/refund`, { urn: 'U1' })).status, 400, 'a refund names its amount')
  t.equal((await post(`${url}/__sim/authorizations/A1/bogus`, { urn: 'U1' })).status, 400)
  t.match(await post(`${url}/__sim/postings`, { type: 'purchase', urn: 'U1', last4: '4321', reference: 'OFF-9', amount: '200' }), { status: 200, body: { posting: { type: 'purchase' } } })
  t.match(await post(`${url}/__sim/postings`, { type: 'fee', urn: 'U1', reference: 'FEE-9', amount: '25' }), { status: 200, body: { posting: { type: 'fee' } } })
  t.equal((await post(`${url}/__sim/postings`, { type: 'fee', urn: 'NOPE', reference: 'FEE-9', amount: '25' })).status, 404)
  t.equal((await post(`${url}/__sim/postings`, { type: 'refund', urn: 'U1', reference: 'X', amount: '25' })).status, 400)
  t.equal((await get(`${url}/__sim/customers/U1`)).body.balance, 10_000 - 1600 + 100 - 200 - 25)

  const bare = buildPrepaidSim({ ...PREPAID_CREDS })
  t.teardown(() => bare.app.close())
  t.equal((await bare.app.inject({ method: 'POST', url: '/__sim/authorizations', payload: auth('B1', '1') })).statusCode, 503, 'no extauth configured')
})

t.test('transfers and unloads post to the journal', async (t) => {
  const sim = buildPrepaidSim({ ...PREPAID_CREDS, customers: [{ urn: 'U1', customerId: 'C1', accountNumber: 'A1', balance: 10_000 }, { urn: 'U2', customerId: 'C2', accountNumber: 'A2', balance: 0 }] })
  t.teardown(() => sim.app.close())
  const ctx = { clientId: PREPAID_CREDS.clientId, bankId: PREPAID_CREDS.bankId, responseDateTime: '20261120100000' }
  t.match(sim.wallets.transfer({
    messageCode: '3460', clientTxnId: 'TR-1', requestDateTime: '20261120100000',
    senders: [{ urn: 'U1', accountNumber: 'A1', transactionAmount: 1000 }], receivers: [{ urn: 'U2', accountNumber: 'A2', transactionAmount: 1000 }]
  }, ctx), { responseCode: '00' })
  t.match(sim.wallets.unload({
    messageCode: '3450', clientTxnId: 'UL-1', requestDateTime: '20261120100000', customerId: 'C1', accountNumber: 'A1', transactionAmount: 2000, fee: 50,
    receiver: 'X', sourceType: 1, fundFlowType: 'UNLOAD', implId: 'I', implType: 'BANK', beneficiaryId: 1
  }, ctx), { responseCode: '00' })
  t.same(sim.journal.postings().map((p) => [p.type, p.reference, p.urn, p.amount]), [
    ['transfer_out', 'TR-1', 'U1', 1000], ['transfer_in', 'TR-1', 'U2', 1000], ['unload', 'UL-1', 'U1', 2050]
  ])
})
