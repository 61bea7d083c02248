import t from 'tap'
import { RISK_PATH } from './fixtures/spec.js'
import { buildRiskSim, DEFAULT_RISK_BANDS } from '../../src/sim/risk-sim.js'
import { listen, RISK_CREDS } from '../adapters/fixtures/setup.js'
import { post } from './fixtures/http.js'

const AUTH = { authorization: `Bearer ${RISK_CREDS.accessToken}` }
const REQ = {
  instanceId: '4321', channelId: 'ECOM01', async: 'false', details: 'false', txnSourceType: 'CARD', partRequest: 'false',
  lastDrop: 'true', acctNumber: '90000000001', txnTimestamp: '20261121093015', clientTxnRefId: 'R-1', purchaseAmount: '1250'
}

t.test('bearer token and the spec formats are enforced', async (t) => {
  const sim = buildRiskSim({ accessToken: RISK_CREDS.accessToken })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())
  t.equal((await post(url + RISK_PATH, REQ)).status, 401)
  t.equal((await post(url + RISK_PATH, REQ, { authorization: 'Bearer nope' })).status, 401)
  const bad: Array<[string, string]> = [['instanceId', '12'], ['async', 'no'], ['lastDrop', 'false'], ['txnTimestamp', '2026-11-21'], ['purchaseAmount', '12.50']]
  for (const [field, value] of bad) {
    t.match(await post(url + RISK_PATH, { ...REQ, [field]: value }, AUTH), { status: 400, body: { errorMessage: new RegExp(field) } }, field)
  }
  t.match(await post(url + RISK_PATH, { ...REQ, purchaseAmount: 1250 }, AUTH), { status: 400 }, 'numbers are not strings')
})

t.test('bands by amount, with the details form', async (t) => {
  const sim = buildRiskSim({ accessToken: RISK_CREDS.accessToken })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())
  const amounts = ['0', '499999', '500000', '2499999', '2500000']
  const got = []
  for (const purchaseAmount of amounts) got.push((await post(url + RISK_PATH, { ...REQ, purchaseAmount }, AUTH)).body.ruleSuggestion)
  t.same(got, ['ACCEPT', 'ACCEPT', 'CHALLENGE', 'CHALLENGE', 'DENY'], `bands: ${JSON.stringify(DEFAULT_RISK_BANDS.map((b) => b.belowAmount))}`)
  const detailed = await post(url + RISK_PATH, { ...REQ, details: 'true', purchaseAmount: '600000' }, AUTH)
  t.match(detailed.body, { ruleRating: 55, stepUp: 'true', NodeId: 'sim-node-1', frictionLess: 'false', observationSummary: { HIGH_AMOUNT: '45' }, exceptions: [] })
})
