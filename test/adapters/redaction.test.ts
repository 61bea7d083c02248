// Every adapter call, successes and failures alike, logged at trace level together with the simulators'
// own request logs: no card data, OTP, key, secure code or token may appear anywhere in the stream.
import t from 'tap'
import { createGatewayAdapter } from '../../src/adapters/gateway/adapter.js'
import { createPrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import { REDACT_CENSOR, REDACT_PATHS } from '../../src/redact.js'
import { createRiskAdapter } from '../../src/adapters/risk/adapter.js'
import { buildGatewaySim } from '../../src/sim/gateway-sim.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { buildRiskSim } from '../../src/sim/risk-sim.js'
import { captureLog, CARD, GATEWAY_CREDS, listen, PREPAID_CREDS, RISK_CREDS } from './fixtures/setup.js'

const OTP = '583920'

function strings (v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v)
  else if (Array.isArray(v)) for (const x of v) strings(x, out)
  else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      out.push(k)
      strings(x, out)
    }
  }
  return out
}

t.test('no secret or card data in the log stream', async (t) => {
  const log = captureLog()
  const gwSim = buildGatewaySim({ ...GATEWAY_CREDS, otpGenerator: () => OTP, logger: log.logger.child({ sim: 'gateway' }) })
  const riskSim = buildRiskSim({ accessToken: RISK_CREDS.accessToken, logger: log.logger.child({ sim: 'risk' }) })
  const ppSim = buildPrepaidSim({
    ...PREPAID_CREDS,
    customers: [{ urn: '90000000001', customerId: 'C1', accountNumber: 'A1', balance: 10_000 }, { urn: '90000000002', customerId: 'C2', accountNumber: 'A2', balance: 0 }],
    logger: log.logger.child({ sim: 'prepaid' })
  })
  const [gwUrl, riskUrl, ppUrl] = await Promise.all([listen(gwSim.app), listen(riskSim.app), listen(ppSim.app)])
  const deps = { logger: log.logger }
  const gw = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: gwUrl }, deps)
  const risk = createRiskAdapter({ ...RISK_CREDS, baseUrl: riskUrl }, deps)
  const pp = createPrepaidAdapter({ ...PREPAID_CREDS, baseUrl: ppUrl }, deps)
  t.teardown(async () => {
    await Promise.all([gw.close(), risk.close(), pp.close()])
    await Promise.all([gwSim.app.close(), riskSim.app.close(), ppSim.app.close()])
  })

  const tokens: string[] = []
  const g = await gw.generateOtp({ ...CARD, merchantReferenceNo: 'LOG-1', nameOnCard: 'JANE Q PUBLIC', mobileNumber: '919800000001' })
  if (g.kind !== 'ok' || g.pgTransactionId === undefined) throw new Error('generateOtp failed')
  const id = g.pgTransactionId
  await gw.verifyOtp({ merchantReferenceNo: 'LOG-1', pgTransactionId: id, otp: '000000' })
  await gw.resendOtp({ merchantReferenceNo: 'LOG-1' })
  await gw.verifyOtp({ merchantReferenceNo: 'LOG-1', pgTransactionId: id, otp: OTP })
  gwSim.faults.set('authorize', { hang: true, phase: 'after', times: 1 })
  await gw.authorize({ merchantReferenceNo: 'LOG-1', pgTransactionId: id }, { budgetMs: 200 })
  await gw.authorize({ merchantReferenceNo: 'LOG-1', pgTransactionId: id })
  await gw.preAuthCompletion({ merchantReferenceNo: 'LOG-1', pgTransactionId: id })
  gwSim.faults.set('generateOtp', { malformed: 'json', times: 1 })
  await gw.generateOtp({ ...CARD, merchantReferenceNo: 'LOG-2' })
  await gw.generateOtp({ ...CARD, merchantReferenceNo: 'LOG-2', pan: '4000000000000002' }).catch(() => undefined)
  await gw.generateOtp({ ...CARD, merchantReferenceNo: 'LOG-3', expDate: '13' }).catch(() => undefined)

  await risk.analyse({ clientTxnRefId: 'R1', acctNumber: '90000000001', txnSourceType: 'CARD', purchaseAmount: 100, details: true })
  await risk.analyse({ clientTxnRefId: 'R2', acctNumber: '90000000001', txnSourceType: 'CARD', purchaseAmount: 1.5 }).catch(() => undefined)

  const sealed = await pp.encrypt({ clientTxnId: 'E1', secureCode: PREPAID_CREDS.secureCode })
  if (sealed.kind === 'ok') tokens.push(sealed.token)
  const from = { urn: '90000000001', accountNumber: 'A1' }
  const to = { urn: '90000000002', accountNumber: 'A2' }
  await pp.transfer({ clientTxnId: 'P1', amount: 500, from, to })
  await pp.transfer({ clientTxnId: 'P2', amount: 50_000, from, to })
  ppSim.faults.set('encrypt', { hang: true, times: 1 })
  await pp.transfer({ clientTxnId: 'P3', amount: 1, from, to }, { budgetMs: 200 })
  ppSim.faults.set('decrypt', { malformed: 'schema', times: 1 })
  await pp.transfer({ clientTxnId: 'P4', amount: 1, from, to })
  const raw = ppSim.seal({ clientTxnId: 'RAW' })
  tokens.push(raw)
  const answer = await pp.fundTransfer(raw)
  if (answer.kind === 'ok') tokens.push(answer.token)
  await pp.decrypt(raw)

  const lines = log.lines()
  t.ok(lines.length > 30, `${lines.length} lines logged`)
  t.ok(lines.some((l) => l.outcome === 'failed' && l.reason === 'timeout'), 'failures were logged too')
  t.ok(lines.some((l) => l.outcome === 'declined' && l.code === '450'), 'declines were logged with their code')

  const secrets: Record<string, string> = {
    PAN: CARD.pan, 'other PAN': '4000000000000002', CVD2: CARD.cvd2, expDate: CARD.expDate, OTP,
    'gateway key': GATEWAY_CREDS.apiKey, 'risk token': RISK_CREDS.accessToken,
    'prepaid key': PREPAID_CREDS.apiKey, 'consumer key': PREPAID_CREDS.consumerKey, 'secure code': PREPAID_CREDS.secureCode,
    'card holder': 'JANE Q PUBLIC'
  }
  tokens.forEach((tok, i) => { secrets[`token ${i}`] = tok })
  const text = log.text()
  const values = lines.flatMap((l) => strings(l))
  // a secret of under 8 characters (the CVD2's 3 digits, the expiry's 4, the OTP's 6) counts where it stands
  // alone, not inside a longer run of the characters of ids, tokens and times: '739' inside a random token or a
  // time's milliseconds is chance (it failed a run once), '739', 'cvd2=739' or '"739"' is the leak
  const foundIn = (secret: string): (v: string) => boolean => {
    if (secret.length >= 8) return (v) => v.includes(secret)
    const alone = new RegExp(`(?<![A-Za-z0-9_-])${secret.replace(/[^A-Za-z0-9]/g, '\\$&')}(?![A-Za-z0-9_-])`)
    return (v) => alone.test(v)
  }
  for (const [name, secret] of Object.entries(secrets)) {
    t.notOk(values.some(foundIn(secret)), `no ${name} in any logged string`)
    if (secret.length >= 8) t.notOk(text.includes(secret), `no ${name} anywhere in the stream`)
  }
  t.notOk(values.some((v) => ['pan', 'cvd2', 'otp', 'token', 'x-api-key', 'secureCode'].includes(v)), 'no field of those names logged')
})

t.test('REDACT_PATHS censor those fields for the service logger, nested or not', async (t) => {
  const log = captureLog()
  log.logger.info({
    pan: CARD.pan,
    body: { pan: CARD.pan, cvd2: CARD.cvd2, expDate: CARD.expDate, otp: OTP, token: 'tok-123456789' },
    req: { headers: { 'x-api-key': 'k-123456789', authorization: 'Bearer t-123456789', securecode: 's-123456789', 'x-consumer-custom-id': 'c-123456789' } },
    header: { 'x-api-key': 'k2-123456789', Authorization: 'k3-123456789' }
  }, 'an object full of secrets')
  const text = log.text()
  for (const s of [CARD.pan, 'tok-123456789', 'k-123456789', 't-123456789', 's-123456789', 'c-123456789', 'k2-123456789', 'k3-123456789']) {
    t.notOk(text.includes(s), `${s.slice(0, 3)}... censored`)
  }
  const line = log.lines()[0] as { body: Record<string, string> }
  t.same(line.body, { pan: REDACT_CENSOR, cvd2: REDACT_CENSOR, expDate: REDACT_CENSOR, otp: REDACT_CENSOR, token: REDACT_CENSOR })
  t.ok(REDACT_PATHS.includes('*.*.authorization'))
})
