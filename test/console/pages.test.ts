// Every console page, as a read key sees it: it answers, says what a code means in words, and shows every value
// a request, a party, a rule file or an operator wrote as text: the hostile probe never arrives as markup.
import t from 'tap'
import { sharedRedisStore } from '../helpers/redis.js'
import { CONSOLE, ConsoleClient, textOf } from './client.js'
import { KEYS, URN, XSS, consoleFixture } from './fixture.js'
import { buildAdminApp } from '../../src/app.js'
import type { Relay } from '../../src/events/relay.js'
import { MemoryStore } from '../../src/store/memory.js'

/** the probe as markup (a tag that would run) */
const RAW = /<script>alert|<img src=x/i

t.test('every page answers a read key, and every hostile value is shown as text', async (t) => {
  const f = await consoleFixture(t)
  const agent = new ConsoleClient(f.adminApp)
  await agent.signIn(KEYS.agent.key)
  await agent.post(`${CONSOLE}/customers/${URN}/credit`, { amount: '10', reference: 'xss-1', reason: `refund ${XSS}` })
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  const pages = [
    `${CONSOLE}/decisions`,
    `${CONSOLE}/decisions?urn=${URN}`,
    `${CONSOLE}/decisions?reference=${encodeURIComponent(f.refs.hostile)}`,
    `${CONSOLE}/decisions/${URN}/${encodeURIComponent(f.refs.hostile)}`,
    `${CONSOLE}/customers/${URN}`,
    `${CONSOLE}/queues`,
    `${CONSOLE}/audit`,
    `${CONSOLE}/rules`,
    `${CONSOLE}/backtest`
  ]
  for (const url of pages) {
    const res = await c.get(url)
    t.equal(res.statusCode, 200, url)
    t.notMatch(res.body, RAW, `${url}: no probe as markup`)
    t.match(res.headers['content-type'], 'text/html')
  }
  const decision = await c.get(`${CONSOLE}/decisions/${URN}/${encodeURIComponent(f.refs.hostile)}`)
  t.match(decision.body, '&lt;script>alert(1)&lt;/script>', 'the merchant name shown as text')
  t.match(textOf(decision.body), `merchantName ${XSS}`)
  const rules = await c.get(`${CONSOLE}/rules`)
  t.match(textOf(rules.body), `No gambling ${XSS}`, 'a rule file\'s description shown as text')
  const audit = await c.get(`${CONSOLE}/audit`)
  t.match(textOf(audit.body), `refund ${XSS}`, 'an operator\'s reason shown as text')
  // a urn and a customer id are text too, in links and in the page
  const hostileUrn = '<svg onload=x>'
  await f.deps.store.putCustomer('URNXSS2', { customerId: XSS })
  t.notMatch((await c.get(`${CONSOLE}/customers/URNXSS2`)).body, RAW)
  const { authBody, platformHeaders } = await import('../helpers/config.js')
  const unknown = authBody({ urn: hostileUrn })
  await f.publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: unknown })
  const listed = await c.get(`${CONSOLE}/decisions?reference=${encodeURIComponent(String(unknown.transactionReferenceNumber))}`)
  t.match(textOf(listed.body), `${hostileUrn}`, 'the unknown urn listed')
  t.notMatch(listed.body, /<svg/i)
  t.match(listed.body, 'href="/admin/console/customers/%3Csvg%20onload%3Dx%3E"', 'its link encoded')
  const opened = await c.get(`${CONSOLE}/decisions/${encodeURIComponent(hostileUrn)}/${encodeURIComponent(String(unknown.transactionReferenceNumber))}`)
  t.equal(opened.statusCode, 200)
  t.notMatch(opened.body, /<svg/i)
  const search = await c.get(`${CONSOLE}/decisions?reference=${encodeURIComponent(XSS)}`)
  t.notMatch(search.body, RAW, 'a searched value is echoed as text')
  t.match(search.body, 'value="&lt;script>alert(1)&lt;/script>"')
})

t.test('a decision says why, in words and the values the check saw', async (t) => {
  const f = await consoleFixture(t)
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  const rule = textOf((await c.get(`${CONSOLE}/decisions/${URN}/${f.refs.rule}`)).body)
  t.match(rule, 'Answer 05 declined (do not honour)')
  t.match(rule, 'Reason rule a rule of the rule set declined it')
  t.match(rule, 'Deciding rule block-gambling')
  const funds = textOf((await c.get(`${CONSOLE}/decisions/${URN}/${f.refs.funds}`)).body)
  t.match(funds, 'Answer 51 declined: not enough money')
  t.match(funds, /Available balance seen 48,050/)
  const approved = textOf((await c.get(`${CONSOLE}/decisions/${URN}/${f.refs.approved}`)).body)
  t.match(approved, 'Authorization: answered 00')
  t.match(approved, 'decision.created in the outbox')
  const missing = await c.get(`${CONSOLE}/decisions/${URN}/NOPE`)
  t.equal(missing.statusCode, 404)
})

t.test('search by code, reason, rule and time, paged newest first', async (t) => {
  const f = await consoleFixture(t)
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  const byRule = textOf((await c.get(`${CONSOLE}/decisions?rule=block-gambling`)).body)
  t.match(byRule, f.refs.rule)
  t.notMatch(byRule, f.refs.approved)
  const byCode = textOf((await c.get(`${CONSOLE}/decisions?code=51`)).body)
  t.match(byCode, f.refs.funds)
  t.notMatch(byCode, f.refs.rule)
  const future = textOf((await c.get(`${CONSOLE}/decisions?from=2099-01-01T00:00`)).body)
  t.match(future, 'No decision found')
  const badTime = await c.get(`${CONSOLE}/decisions?from=yesterday`)
  t.equal(badTime.statusCode, 400)
  t.match(textOf(badTime.body), 'is not a date and time')
  for (let i = 0; i < 30; i++) {
    const { decide } = await import('./fixture.js')
    await decide(f, { transactionAmount: '1' })
  }
  const first = await c.get(`${CONSOLE}/decisions?urn=${URN}`)
  const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]
  t.ok(next, 'a next page link')
  const second = await c.get((next ?? '').replace(/&amp;/g, '&'))
  t.equal(second.statusCode, 200)
  t.match(textOf(second.body), f.refs.approved, 'the oldest on the second page')
})

t.test('the backtest viewer shows a report as tables, and refuses what is not one', async (t) => {
  const f = await consoleFixture(t)
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  await c.get(`${CONSOLE}/backtest`)
  const report = {
    from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z', decisions: 48,
    baseline: { reproduced: 47, unreproduced: [{ reference: 'TRN-9', urn: 'U1', recorded: '00', replayed: '65', reason: `window ${XSS}` }] },
    changes: { approvedToDeclined: { count: 4, amount: 120000 }, declinedToApproved: { count: 11, amount: 5500 } },
    rules: [{ id: 'atm-watch', in: 'candidate', hits: 9, approvedToDeclined: { count: 4, amount: 120000, samples: ['TRN-1'] }, declinedToApproved: { count: 0, amount: 0, samples: [] } }],
    changed: [{ reference: 'TRN-1', urn: 'U1', from: '00', to: '05', baselineRule: null, candidateRule: 'atm-watch' }],
    warnings: []
  }
  const res = await f.adminApp.inject({
    method: 'POST',
    url: `${CONSOLE}/backtest`,
    headers: { cookie: c.cookie, 'content-type': 'multipart/form-data; boundary=XyZ' },
    payload: [
      '--XyZ', 'Content-Disposition: form-data; name="_csrf"', '', c.csrf,
      '--XyZ', 'Content-Disposition: form-data; name="file"; filename="report.json"', 'Content-Type: application/json', '', JSON.stringify(report),
      '--XyZ--', ''
    ].join('\r\n')
  })
  t.equal(res.statusCode, 200)
  const text = textOf(res.body)
  t.match(text, 'Approved → declined 4 (amount 1,200.00 INR)')
  t.match(text, 'atm-watch candidate 9 4 1,200.00 INR 0 0.00 INR TRN-1')
  t.match(text, 'changes: approved -> declined 4 (amount 1,200.00 INR), declined -> approved 11 (amount 55.00 INR)', 'the command\'s own lines')
  t.notMatch(res.body, RAW)
  const pasted = await c.post(`${CONSOLE}/backtest`, { json: '{"from": 1}' })
  t.equal(pasted.statusCode, 400)
  t.match(textOf(pasted.body), 'This is not a backtest report')
  const notJson = await c.post(`${CONSOLE}/backtest`, { json: XSS })
  t.equal(notJson.statusCode, 400)
  t.notMatch(notJson.body, RAW, 'the pasted text comes back as text')
})

t.test('queues: a parked event is listed and sent again with a reason, audited', async (t) => {
  const f = await consoleFixture(t)
  const plain = new ConsoleClient(f.adminApp)
  await plain.signIn(KEYS.agent.key)
  t.match(textOf((await plain.get(`${CONSOLE}/queues`)).body), 'Events are not sent (WEBHOOK_URL is not set)')
  // a relay with one parked event whose receiver takes it on the second try
  const event = { id: 'evt_7_1795750000000_0', type: 'funds.credited', createdAt: '2026-11-21T09:00:00.000Z', data: { urn: URN, reference: XSS } }
  let parked = [{ event, parkedAtMs: Date.parse('2026-11-22T09:00:00Z'), attempts: 40, lastError: `HTTP 500 ${XSS}` }]
  let tries = 0
  const relay = {
    parkedEvents: async () => parked,
    resend: async (id: string) => {
      if (id !== event.id) return { found: false, ok: false, detail: 'not parked' }
      tries++
      if (tries === 1) return { found: true, ok: false, detail: 'HTTP 500' }
      parked = []
      return { found: true, ok: true, detail: 'HTTP 200' }
    }
  }
  const app = await buildAdminApp({ ...f.deps, events: relay as unknown as Relay })
  t.teardown(async () => { await app.close() })
  const reader = new ConsoleClient(app)
  await reader.signIn(KEYS.reader.key)
  const seen = await reader.get(`${CONSOLE}/queues`)
  t.match(textOf(seen.body), `${event.id} funds.credited ${URN}`)
  t.notMatch(seen.body, RAW)
  t.notMatch(seen.body, '/resend"', 'a read key gets no re-send button')
  const c = new ConsoleClient(app)
  await c.signIn(KEYS.agent.key)
  const page = await c.get(`${CONSOLE}/queues`)
  t.match(page.body, `action="${CONSOLE}/queues/events/${event.id}/resend"`)
  const first = await c.post(`${CONSOLE}/queues/events/${event.id}/resend`, { reason: 'receiver fixed, try again' })
  t.match(textOf((await c.follow(first)).body), 'did not take event')
  const second = await c.post(`${CONSOLE}/queues/events/${event.id}/resend`, { reason: 'receiver really fixed' })
  const after = textOf((await c.follow(second)).body)
  t.match(after, `Event ${event.id} delivered`)
  t.match(after, 'No parked event')
  const recs = (f.deps.store as MemoryStore).auditRecords().filter((a) => a.route === 'POST /admin/console/queues/events/:id/resend')
  t.same(recs.map((r) => [r.outcome, r.reason, r.keyId, r.target.id]), [
    ['failed', 'receiver fixed, try again', KEYS.agent.id, event.id],
    ['delivered', 'receiver really fixed', KEYS.agent.id, event.id]
  ])
})

for (const on of ['memory', 'redis'] as const) {
  t.test(`card-lifecycle records (${on}): on the customer page, both sides of a transfer, and a FAILED call in the queue with its status now`, async (t) => {
    const f = await consoleFixture(t, on === 'redis' ? { store: await sharedRedisStore(t) } : {})
    const store = f.deps.store
    const audit = (route: string, outcome: string, target: Record<string, string>): Promise<unknown> =>
      store.appendAudit({ id: `a-${route}-${outcome}`, keyId: 'backend-1', route, scope: 'lifecycle', requestId: 'r1', target, outcome, before: null, after: { status: outcome } })
    const OTHER = 'URNCONSOLE2'
    await store.putCustomer(OTHER, {})
    await store.createLifecycle('load', 'LOAD-OK-1', { merchantReferenceNo: 'LOAD-OK-1', urn: URN, amount: '5000', status: 'LOADED' })
    await audit('POST /v1/loads', 'OTP_SENT', { urn: URN, merchantReferenceNo: 'LOAD-OK-1', amount: '5000' })
    await store.createLifecycle('unload', 'UNL-9', { clientTxnId: 'UNL-9', urn: URN, amount: '1500', status: 'FAILED' })
    await audit('POST /v1/unloads', 'FAILED', { urn: URN, clientTxnId: 'UNL-9', amount: '1500' })
    // a transfer's audit names fromUrn and toUrn, no urn: found through the store's index of each side
    await store.putLifecycle('transfer', 'TRF-3', { clientTxnId: 'TRF-3', fromUrn: URN, toUrn: OTHER, amount: '2500', status: 'TRANSFERRED', rev: 1 }, 0)
    await audit('POST /v1/transfers', 'TRANSFERRED', { clientTxnId: 'TRF-3', fromUrn: URN, toUrn: OTHER, amount: '2500' })
    // a record of before the index, named only by the customer's audit, is still listed
    await store.appendAudit({ id: 'a-old', keyId: 'backend-1', route: 'POST /v1/loads', scope: 'lifecycle', requestId: 'r0', target: { urn: URN, merchantReferenceNo: 'LOAD-GONE' }, outcome: 'LOADED', before: null, after: null })
    const c = new ConsoleClient(f.adminApp)
    await c.signIn(KEYS.reader.key)
    const customer = textOf((await c.get(`${CONSOLE}/customers/${URN}`)).body)
    t.match(customer, 'load LOAD-OK-1 - LOADED 5,000')
    t.match(customer, 'unload UNL-9 - FAILED 1,500')
    t.match(customer, `transfer TRF-3 to ${OTHER} TRANSFERRED 2,500`, 'the sender\'s page')
    t.match(customer, 'load LOAD-GONE - no longer kept')
    const receiver = textOf((await c.get(`${CONSOLE}/customers/${OTHER}`)).body)
    t.match(receiver, `transfer TRF-3 from ${URN} TRANSFERRED 2,500`, 'the receiver\'s page')
    t.notMatch(receiver, 'LOAD-OK-1')
    const queues = textOf((await c.get(`${CONSOLE}/queues`)).body)
    t.match(queues, `unload UNL-9 ${URN} 1,500 FAILED backend-1`)
    t.notMatch(queues, 'LOAD-OK-1', 'a call that did not fail is not in the queue')
  })
}
