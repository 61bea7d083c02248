// The settlement as an operator and the platform meet it: holds mode through the External Authorization
// endpoint (per-MCC expiry), the customer's available, held and ledger, a statement posted to the admin API
// and its report, the exception queue worked with an audited resolution, metrics.
import t from 'tap'
import { build } from '../helpers/app.js'
import { adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import type { ReconException } from '../../src/settlement/types.js'
import { DAY, NEXT } from '../helpers/posting-day.js'

const admin = { authorization: adminHeaders.authorization }

async function customer (app: Awaited<ReturnType<typeof build>>['adminApp'], urn: string): Promise<Record<string, unknown>> {
  return (await app.inject({ method: 'GET', url: `/admin/v1/customers/${urn}`, headers: admin })).json()
}

t.test('holds mode: the day of an operator, end to end', async (t) => {
  const { publicApp, adminApp, deps } = await build(t, { env: { SETTLEMENT_MODE: 'holds', HOLD_EXPIRY: '7d', HOLD_EXPIRY_BY_MCC: '7011:31d' } })
  await adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/URN0001', headers: adminHeaders, payload: {} })
  await adminApp.inject({ method: 'POST', url: '/admin/v1/customers/URN0001/credits', headers: adminHeaders, payload: { amount: '10000', reference: 'seed' } })
  const shop = authBody({ transactionAmount: '1250' })
  const hotel = authBody({ transactionAmount: '3000', mcc: '7011' })
  const lost = authBody({ transactionAmount: '500' })
  for (const b of [shop, hotel, lost]) {
    const r = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: b })
    t.equal(r.json().responseCode, '00')
  }
  t.match(await customer(adminApp, 'URN0001'), { available: '5250', held: '4750', ledger: '10000' })
  // the hotel's hold lasts 31 days, the others 7
  const s = settlementFor(deps.store)
  const eightDays = Date.now() + 8 * 86_400_000
  const { expireDue } = await import('../../src/settlement/expiry.js')

  const statement = [
    { statement: { id: 'D-20261120', from: `${DAY}T00:00:00Z`, to: `${NEXT}T00:00:00Z`, complete: true } },
    { platformId: 'PF-1', type: 'purchase', reference: shop.transactionReferenceNumber, urn: 'URN0001', last4: '4321', amount: '1250', currency: '356', postedAt: `${DAY}T12:00:00Z` },
    { platformId: 'PF-2', type: 'refund', reference: 'RF-9', urn: 'URN0001', last4: '4321', amount: '200', currency: '356', postedAt: `${DAY}T13:00:00Z` },
    { platformId: 'PF-3', type: 'purchase', reference: 'NEVER-SEEN', urn: 'URN0001', last4: '4321', amount: '99', currency: '356', postedAt: `${DAY}T14:00:00Z` }
  ].map((l) => JSON.stringify(l)).join('\n')
  const bad = await adminApp.inject({ method: 'POST', url: '/admin/v1/statements', headers: { ...admin, 'content-type': 'application/x-ndjson' }, payload: statement.replace('"1250"', '"12.50"') })
  t.equal(bad.statusCode, 422)
  t.equal(bad.json().error, 'STATEMENT_INVALID')
  t.same(bad.json().lines, [{ line: 2, error: 'amount must be a positive whole number of minor units as a digit string (at most 15 digits)' }])
  t.match(await customer(adminApp, 'URN0001'), { available: '5250', held: '4750', ledger: '10000' }, 'nothing applied')

  const ok = await adminApp.inject({ method: 'POST', url: '/admin/v1/statements', headers: { ...admin, 'content-type': 'application/x-ndjson' }, payload: statement })
  t.equal(ok.statusCode, 200, ok.body)
  t.match(ok.json(), { id: 'D-20261120', lines: 3, applied: 3, exceptions: 1, outcomes: { cleared: { count: 1, amount: '1250' }, refund: { count: 1, amount: '200' }, force_post: { count: 1, amount: '99' } } })
  const report = await adminApp.inject({ method: 'GET', url: '/admin/v1/statements/D-20261120', headers: admin })
  t.match(report.json(), { applied: 3, outcomes: { cleared: { count: 1 } } })
  t.match(await customer(adminApp, 'URN0001'), { available: '5351', held: '3500', ledger: '8851' })

  t.equal(await expireDue(s, eightDays), 1, 'the shop\'s lost approval expires at 7 days; the hotel\'s is kept')
  t.match(await customer(adminApp, 'URN0001'), { available: '5851', held: '3000', ledger: '8851' })

  const list = await adminApp.inject({ method: 'GET', url: '/admin/v1/reconciliation/exceptions?status=open', headers: admin })
  const items = list.json().items as ReconException[]
  t.equal(items.length, 1)
  t.match(items[0], { kind: 'force_post', amount: '99', urn: 'URN0001' })
  const id = items[0]?.id as string
  const noReason = await adminApp.inject({ method: 'POST', url: `/admin/v1/reconciliation/exceptions/${id}/resolve`, headers: adminHeaders, payload: { action: 'credit', amount: '99' } })
  t.equal(noReason.statusCode, 400)
  const credit = await adminApp.inject({ method: 'POST', url: `/admin/v1/reconciliation/exceptions/${id}/resolve`, headers: adminHeaders, payload: { action: 'credit', amount: '99', reason: 'merchant confirmed a duplicate' } })
  t.equal(credit.statusCode, 200, credit.body)
  t.match(credit.json(), { status: 'resolved', replayed: false, resolution: { action: 'credit', amount: '99', reason: 'merchant confirmed a duplicate' } })
  const again = await adminApp.inject({ method: 'POST', url: `/admin/v1/reconciliation/exceptions/${id}/resolve`, headers: adminHeaders, payload: { action: 'credit', amount: '99', reason: 'again' } })
  t.match(again.json(), { replayed: true })
  const other = await adminApp.inject({ method: 'POST', url: `/admin/v1/reconciliation/exceptions/${id}/resolve`, headers: adminHeaders, payload: { action: 'writeOff', reason: 'x' } })
  t.equal(other.statusCode, 409)
  t.match(await customer(adminApp, 'URN0001'), { available: '5950', held: '3000', ledger: '8950' }, 'credited once')
  const audit = await adminApp.inject({ method: 'GET', url: '/admin/v1/audit', headers: admin })
  t.ok((audit.json().items as Array<{ route: string }>).some((a) => a.route.endsWith('/resolve')), 'the resolution is audited')
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /extauth_settlement_postings_total\{outcome="force_post"\} 1/)
  t.match(metrics, /extauth_reconciliation_exceptions_open\{kind="force_post"\} 0/)
  const events = (await deps.store.readDecisionStream('URN0001')).map((e) => e.type)
  for (const type of ['settlement.posted', 'authorization.expired', 'reconciliation.exception', 'reconciliation.resolved']) t.ok(events.includes(type), type)
})

t.test('final mode (the default): a 00 holds nothing; the customer view says so', async (t) => {
  const { publicApp, adminApp } = await build(t)
  await adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/URN0001', headers: adminHeaders, payload: {} })
  await adminApp.inject({ method: 'POST', url: '/admin/v1/customers/URN0001/credits', headers: adminHeaders, payload: { amount: '10000', reference: 'seed' } })
  const r = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: authBody() })
  t.equal(r.json().responseCode, '00')
  t.match(await customer(adminApp, 'URN0001'), { available: '8750', held: '0', ledger: '8750' })
})

t.test('a bad SETTLEMENT_* value stops start-up naming the variable', async (t) => {
  const { testConfig } = await import('../helpers/config.js')
  for (const [name, value] of [['SETTLEMENT_MODE', 'maybe'], ['HOLD_EXPIRY', '7 days'], ['HOLD_EXPIRY_BY_MCC', '7011=31d'], ['SETTLEMENT_GRACE', '0h'], ['STATEMENT_MAPS_FILE', '/no/such/file.json']]) {
    let variable = ''
    try { testConfig({ [name as string]: value as string }) } catch (err) { variable = (err as { variable: string }).variable }
    t.equal(variable, name, `${name}=${value as string} is refused, naming it`)
  }
})
