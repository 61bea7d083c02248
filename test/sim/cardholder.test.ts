// The cardholder journey of the issuer simulator, run against extauth on the RBI defaults: every step answers
// what it expects, for the reason it expects.
import t from 'tap'
import { adminHeaders } from '../helpers/config.js'
import { adminClient, auth, buildApp, freshUrn } from '../helpers/http-checks.js'
import { cardholderJourney } from '../../src/sim/issuer.js'

t.test('turns ECOM on, sets a daily limit, travels abroad with international off then on', async (t) => {
  const { publicApp, adminApp } = await buildApp(t, { env: { CARD_CONTROLS_FILE: 'examples/card-controls.rbi.json', RULES_DIR: 'rules' } })
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 5_000_000)
  await a.card(urn, '4242', 'ACTIVE')
  const steps = cardholderJourney({ urn, last4Digits: '4242' }, { run: 'T1' })
  t.ok(steps.some((s) => s.kind === 'controls') && steps.some((s) => s.kind === 'auth' && s.body.billingCurrency !== undefined), 'controls and travel are both in it')
  for (const step of steps) {
    if (step.kind === 'controls') {
      const res = await adminApp.inject({ method: 'PATCH', url: `/admin/v1/customers/${urn}/cards/4242/controls`, headers: adminHeaders, payload: JSON.stringify(step.patch) })
      t.equal(res.statusCode, 200, step.what)
      continue
    }
    const res = await auth(publicApp, step.body)
    t.equal(res.json().responseCode, step.expect.code, `${step.what}: ${step.expect.code}`)
    t.match(await a.decision(urn, step.body.transactionReferenceNumber), { reason: step.expect.reason }, `${step.what}: ${step.expect.reason}`)
  }
})
