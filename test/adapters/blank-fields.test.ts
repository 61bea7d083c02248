// The parties' own samples write an empty value as "". Each party's parser takes "" in an optional field
// as absent: a real gateway's invalid-OTP answer, a prepaid answer and a risk answer with blanks are read,
// not called malformed. A required field that is "" is still missing.
import t from 'tap'
import Fastify from 'fastify'
import { createGatewayAdapter } from '../../src/adapters/gateway/adapter.js'
import { createPrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import { createRiskAdapter } from '../../src/adapters/risk/adapter.js'
import { GATEWAY_CREDS, listen, PREPAID_CREDS, quietLogger, RISK_CREDS } from './fixtures/setup.js'

/** A party answering every POST with the next body of `answers`. */
async function fakeParty (t: { teardown: (fn: () => unknown) => void }, answers: unknown[]): Promise<string> {
  const app = Fastify()
  let i = 0
  app.post('/*', async () => answers[Math.min(i++, answers.length - 1)])
  t.teardown(async () => { await app.close() })
  return await listen(app)
}

t.test('gateway: verifyOtp failed with 450 and blank authResponseCode and tranCtxId is an invalid OTP', async (t) => {
  const url = await fakeParty(t, [{
    status: 'failed', errorcode: '450', errormsg: 'Invalid OTP', validityPeriod: '', pgTransactionId: '', authResponseCode: '', tranCtxId: ''
  }, {
    status: 'success', errorcode: '00', errormsg: '', validityPeriod: '', pgTransactionId: '1234', authResponseCode: '00', tranCtxId: ''
  }, {
    status: 'failed', errorcode: '', errormsg: 'x'
  }])
  const gw = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await gw.close() })
  const input = { merchantReferenceNo: 'M-1', pgTransactionId: '1234', otp: '123456' }
  t.match(await gw.verifyOtp(input), { kind: 'declined', code: '450', family: 'otp_invalid' })
  const ok = await gw.verifyOtp(input)
  t.match(ok, { kind: 'ok', pgTransactionId: '1234', authResponseCode: '00' })
  t.notOk('tranCtxId' in ok, 'a blank optional field is absent')
  t.match(await gw.verifyOtp(input), { kind: 'failed', reason: 'malformed', retryable: true }, 'a blank required field is missing')
})

t.test('gateway: authorize approved with blank optional fields', async (t) => {
  const url = await fakeParty(t, [{ transactionId: '77', status: '50020', pgErrorCode: '0', pgErrorDetail: '', approvalCode: '', rrn: '', schemeTransactionId: '' }])
  const gw = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await gw.close() })
  t.match(await gw.authorize({ merchantReferenceNo: 'M-1', pgTransactionId: '77' }), { kind: 'ok', transactionId: '77', status: '50020' })
})

t.test('risk: an answer with blank optional detail fields', async (t) => {
  const url = await fakeParty(t, [{ ruleRating: 10, clientId: 'abc', ruleSuggestion: 'ACCEPT', stepUp: 'false', NodeId: '', frictionLess: '' }])
  const risk = createRiskAdapter({ ...RISK_CREDS, baseUrl: url, timeoutMs: 2000 }, { logger: quietLogger() })
  t.teardown(async () => { await risk.close() })
  t.match(await risk.analyse({ clientTxnRefId: 'R1', acctNumber: 'A1', purchaseAmount: 1, txnSourceType: 'POS' }),
    { kind: 'ok', ruleRating: 10, ruleSuggestion: 'ACCEPT', stepUp: false })
})

t.test('prepaid: a decrypted transfer answer with blank optional fields', async (t) => {
  const answer = {
    messageCode: '3460', clientTxnId: 'TX-1', responseCode: '00', responseMessage: '', ledgerTransactionId: '1000000001',
    transactionAmount: 500, availableBalance: '', urn: '', customerId: '', responseDateTime: '',
    senders: [{ urn: '1', ledgerRefNo: '', availableBalance: '', transactionAmount: 500 }], receivers: []
  }
  const url = await fakeParty(t, [{ token: 'request' }, { token: 'answer' }, answer])
  const pp = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: url }, { logger: quietLogger() })
  t.teardown(async () => { await pp.close() })
  const r = await pp.transfer({ clientTxnId: 'TX-1', amount: 500, from: { urn: '1', accountNumber: 'A' }, to: { urn: '2', accountNumber: 'B' } })
  t.match(r, { kind: 'ok', clientTxnId: 'TX-1', ledgerTransactionId: '1000000001', transactionAmount: 500 })
  t.notOk('availableBalance' in r)
})
