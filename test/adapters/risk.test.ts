import t from 'tap'
import { createRiskAdapter } from '../../src/adapters/risk/adapter.js'
import type { RiskAdapter, RiskOptions } from '../../src/adapters/risk/adapter.js'
import { buildRiskSim } from '../../src/sim/risk-sim.js'
import type { RiskSim, RiskSimOptions } from '../../src/sim/risk-sim.js'
import { elapsedMs, listen, quietLogger, RISK_CREDS } from './fixtures/setup.js'
import { answerDueMs } from '../helpers/config.js'
import type { Teardown } from './fixtures/setup.js'

const NOW = Date.UTC(2026, 10, 21, 9, 30, 15)

async function rig (t: Teardown, simOpts: Partial<RiskSimOptions> = {}, riskOpts: Partial<RiskOptions> = {}): Promise<{ sim: RiskSim, risk: RiskAdapter, url: string }> {
  const sim = buildRiskSim({ accessToken: RISK_CREDS.accessToken, instanceId: RISK_CREDS.instanceId, ...simOpts })
  const url = await listen(sim.app)
  // the 300 ms default is for production; these calls must also answer on a loaded test machine
  const risk = createRiskAdapter({ ...RISK_CREDS, baseUrl: url, now: () => NOW, timeoutMs: 5000, ...riskOpts }, { logger: quietLogger() })
  t.teardown(async () => {
    await risk.close()
    await sim.app.close()
  })
  return { sim, risk, url }
}

const TXN = { clientTxnRefId: 'REF-0001', acctNumber: '90000000001', txnSourceType: 'CARD' }

t.test('scores by the configured bands and sends the spec formats', async (t) => {
  const { sim, risk } = await rig(t)
  const low = await risk.analyse({ ...TXN, purchaseAmount: 1250 })
  t.match(low, { kind: 'ok', ruleRating: 10, ruleSuggestion: 'ACCEPT', stepUp: false })
  if (low.kind === 'ok') t.match(low.clientId, /^[0-9a-f-]{36}$/)
  t.same(sim.received.at(-1), {
    instanceId: '4321',
    channelId: 'ECOM01',
    async: 'false',
    details: 'false',
    txnSourceType: 'CARD',
    partRequest: 'false',
    lastDrop: 'true',
    acctNumber: '90000000001',
    txnTimestamp: '20261121093015',
    clientTxnRefId: 'REF-0001',
    purchaseAmount: '1250'
  }, 'every value a string; timestamp from the clock, in UTC')

  const high = await risk.analyse({ ...TXN, purchaseAmount: 9_000_000, details: true, ip: '2001:db8::1', custom: { deviceId: 'D1' } })
  t.match(high, { kind: 'ok', ruleRating: 90, ruleSuggestion: 'DENY', stepUp: true, nodeId: 'sim-node-1', frictionLess: false, exceptions: [] })
  if (high.kind === 'ok') t.same(high.observationSummary, { HIGH_AMOUNT: '45', VERY_HIGH_AMOUNT: '35' })
  t.match(sim.received.at(-1), { details: 'true', ip: '2001:db8::1', deviceId: 'D1' })
})

t.test('a scoring function', async (t) => {
  const { risk } = await rig(t, {
    scoring: (req) => (req.acctNumber ?? '').endsWith('13')
      ? { ruleRating: 700, ruleSuggestion: 'REVIEW', stepUp: true }
      : { ruleRating: 0, ruleSuggestion: 'ACCEPT', stepUp: false }
  })
  t.match(await risk.analyse({ ...TXN, acctNumber: '4000000000000013', purchaseAmount: 1 }), { kind: 'ok', ruleRating: 700, stepUp: true })
  t.match(await risk.analyse({ ...TXN, purchaseAmount: 1 }), { kind: 'ok', ruleRating: 0 })
})

t.test('a malformed request is a typed error and nothing is sent', async (t) => {
  const { sim, risk, url } = await rig(t)
  const cases: Array<[string, Parameters<RiskAdapter['analyse']>[0]]> = [
    ['fractional amount', { ...TXN, purchaseAmount: 12.5 }],
    ['negative amount', { ...TXN, purchaseAmount: -1 }],
    ['timestamp not a calendar instant', { ...TXN, purchaseAmount: 1, txnTimestamp: '20261301000000' }],
    ['timestamp with separators', { ...TXN, purchaseAmount: 1, txnTimestamp: '2026-11-21T09:30:15Z' }],
    ['invalid date', { ...TXN, purchaseAmount: 1, txnTimestamp: new Date('nope') }],
    ['ip', { ...TXN, purchaseAmount: 1, ip: '999.1.1.1' }],
    ['channel not alphanumeric', { ...TXN, purchaseAmount: 1, channelId: 'E-COM' }],
    ['country code', { ...TXN, purchaseAmount: 1, merchantCountryCode: 'IND' }],
    ['custom field overwriting a standard one', { ...TXN, purchaseAmount: 1, custom: { lastDrop: 'false' } }],
    ['missing account', { ...TXN, acctNumber: '', purchaseAmount: 1 }]
  ]
  for (const [name, input] of cases) {
    await t.rejects(risk.analyse(input), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST', statusCode: 400 }, name)
  }
  t.equal(sim.faults.count('analyse'), 0, 'the risk service saw none of them')
  t.throws(() => createRiskAdapter({ ...RISK_CREDS, instanceId: '12', baseUrl: url }, { logger: quietLogger() }),
    { code: 'EXTAUTH_ERR_ADAPTER_OPTION', message: /instanceId/ })
})

t.test('a string timestamp already in the format is sent as it is', async (t) => {
  const { sim, risk } = await rig(t)
  await risk.analyse({ ...TXN, purchaseAmount: 5, txnTimestamp: '20240229235959' })
  t.equal(sim.received.at(-1)?.txnTimestamp, '20240229235959')
})

t.test('wrong token: an http_status failure, retryable as every failure (the operator puts the token right, then the call goes through)', async (t) => {
  const { url } = await rig(t)
  const bad = createRiskAdapter({ ...RISK_CREDS, accessToken: 'nope', baseUrl: url, timeoutMs: 5000 }, { logger: quietLogger() })
  t.teardown(() => bad.close())
  t.match(await bad.analyse({ ...TXN, purchaseAmount: 1 }), { kind: 'failed', reason: 'http_status', httpStatus: 401, retryable: true })
})

t.test('a hung risk service: failed/timeout within RISK_TIMEOUT_MS', async (t) => {
  // above the default (300 ms), so that ending on the default would show
  const timeoutMs = 400
  const { risk } = await rig(t, { faults: { analyse: { hang: true } } }, { timeoutMs })
  const started = performance.now()
  t.match(await risk.analyse({ ...TXN, purchaseAmount: 1 }), { kind: 'failed', reason: 'timeout', retryable: true })
  const ms = elapsedMs(started)
  t.ok(ms >= timeoutMs - 20, `not before the configured timeout (${Math.round(ms)} ms)`)
  t.ok(ms <= answerDueMs(timeoutMs), `ended by ${answerDueMs(timeoutMs)} ms (${Math.round(ms)} ms)`)
  t.match(await risk.analyse({ ...TXN, purchaseAmount: 1 }, { budgetMs: 20 }), { kind: 'failed', reason: 'timeout', detail: 'budget of 20 ms spent' },
    'a smaller remaining budget wins')
})

t.test('malformed answers', async (t) => {
  const { sim, risk } = await rig(t)
  sim.faults.set('analyse', { malformed: 'schema', times: 1 })
  t.match(await risk.analyse({ ...TXN, purchaseAmount: 1 }), { kind: 'failed', reason: 'malformed', detail: '/ required' })
  sim.faults.set('analyse', { malformed: 'json', times: 1 })
  t.match(await risk.analyse({ ...TXN, purchaseAmount: 1 }), { kind: 'failed', reason: 'malformed', detail: 'not JSON' })
  sim.faults.set('analyse', { status: 502, times: 1 })
  t.match(await risk.analyse({ ...TXN, purchaseAmount: 1 }), { kind: 'failed', reason: 'http_status', httpStatus: 502, retryable: true })
})
