// Through the apps: a decision's event reaches WEBHOOK_URL; the journal routes find it; a refused body is
// logged with the reference and urn it carried and counted by reason.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { build } from '../helpers/app.js'
import { adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { receiver } from '../helpers/receiver.js'
import { AUTH_PATH } from '../helpers/http-checks.js'

t.test('events, journal and refusals through the apps', async (t) => {
  const rx = await receiver(t)
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  const { publicApp, adminApp, logs } = await build(t, { env: { WEBHOOK_URL: rx.url, WEBHOOK_SECRET: secret, WEBHOOK_EVENTS: 'decision.created,funds.credited' } })
  const urn = 'UAPP1'
  t.equal((await adminApp.inject({ method: 'PUT', url: `/admin/v1/customers/${urn}`, headers: adminHeaders, payload: {} })).statusCode, 200)
  t.equal((await adminApp.inject({ method: 'POST', url: `/admin/v1/customers/${urn}/credits`, headers: adminHeaders, payload: { amount: '5000', reference: 'open' } })).statusCode, 200)
  // a field outside the specification is ignored, and never kept: it could be a card number
  const body = authBody({ urn, transactionAmount: '120', transactionReferenceNumber: 'TRN-5', pan: '5555444433331111' })
  const res = await publicApp.inject({ method: 'POST', url: AUTH_PATH, headers: platformHeaders(), payload: body })
  t.equal(res.statusCode, 200)
  await rx.until(() => rx.accepted().some((e) => e.type === 'decision.created'))
  t.same(rx.accepted().map((e) => e.type), ['funds.credited', 'decision.created'], 'customer.updated is not in WEBHOOK_EVENTS')
  const created = rx.accepted()[1]
  t.notOk(rx.received.some((r) => r.body.includes('5555444433331111')), 'an unknown field is not sent')
  t.match(created?.data, { urn, reference: 'TRN-5', request: { transactionReferenceNumber: 'TRN-5', transactionAmount: '120', last4Digits: body.last4Digits } })

  const byRef = await adminApp.inject({ method: 'GET', url: '/admin/v1/decisions/TRN-5', headers: adminHeaders })
  t.equal(byRef.statusCode, 200)
  t.match(byRef.json(), { items: [{ v: 1, urn, reference: 'TRN-5', code: '00', request: { transactionAmount: '120' } }] })
  t.notOk(byRef.body.includes('5555444433331111'), 'nor kept')
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/decisions/NOPE', headers: adminHeaders })).statusCode, 404)
  const search = await adminApp.inject({ method: 'GET', url: `/admin/v1/decisions?urn=${urn}&code=00&limit=5`, headers: adminHeaders })
  t.match(search.json(), { items: [{ reference: 'TRN-5' }], nextCursor: null })
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/decisions?from=yesterday', headers: adminHeaders })).statusCode, 400)
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/decisions?cursor=zzz', headers: adminHeaders })).statusCode, 400)
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/events/failed', headers: adminHeaders })).json().items.length, 0)
  t.equal((await adminApp.inject({ method: 'POST', url: '/admin/v1/events/failed/evt_1_2_3/resend', headers: adminHeaders })).statusCode, 404)
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/events/failed' })).statusCode, 401, 'behind the admin token')

  const bad = await publicApp.inject({ method: 'POST', url: AUTH_PATH, headers: platformHeaders(), payload: { ...body, transactionReferenceNumber: 'TRN-6', transactionAmount: 12 } })
  t.equal(bad.statusCode, 400)
  t.match(logs.find((l) => l.msg === 'bad request'), { reference: 'TRN-6', urn, reason: 'validation', status: 400 })
  const unauth = await publicApp.inject({ method: 'POST', url: AUTH_PATH, headers: platformHeaders({ 'x-consumer-custom-id': 'wrong' }), payload: { ...body, transactionReferenceNumber: 'TRN-7' } })
  t.equal(unauth.statusCode, 401)
  t.notOk(logs.some((l) => l.reference === 'TRN-7'), 'a 401 body is never read')
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /extauth_rejected_request_reasons_total\{status="400",reason="validation"\} 1/)
  t.match(metrics, /extauth_rejected_request_reasons_total\{status="401",reason="caller"\} 1/)
  t.match(metrics, /extauth_events_delivered_total\{type="decision.created"\} 1/)
})
