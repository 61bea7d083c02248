// Stand-in through the public and admin listeners (contract §14): entered when the store cannot be reached,
// not when its outcome is unknown; the policy's checks and caps; a repeat answered from the journal; the
// replay into the store once it answers; forcing on and off with a reason; readiness; negative balances.
import t, { type Test } from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { build } from '../helpers/app.js'
import { adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { EXTERNAL_AUTH_PATH } from '../../src/http/external-auth-route.js'
import { policyFile, switchedStore } from './helpers.js'
import type { FastifyInstance } from 'fastify'

async function setUp (t: Test, over: Record<string, unknown> = {}): Promise<{ inner: MemoryStore, sw: ReturnType<typeof switchedStore> } & Awaited<ReturnType<typeof build>>> {
  const inner = new MemoryStore()
  const sw = switchedStore(inner)
  const built = await build(t, { store: sw.store, env: { STANDIN_POLICY_FILE: policyFile(t, over) } })
  await inner.putCustomer('USI1', { customerId: 'C1' })
  await inner.credit('USI1', 300_000, 'seed')
  return { inner, sw, ...built }
}

async function auth (app: FastifyInstance, over: Record<string, unknown> = {}): Promise<{ status: number, code: string, body: Record<string, unknown> }> {
  const body = authBody({ urn: 'USI1', transactionAmount: '10000', ...over })
  const res = await app.inject({ method: 'POST', url: EXTERNAL_AUTH_PATH, headers: platformHeaders(), payload: body })
  const json = res.json<{ responseCode: string }>()
  return { status: res.statusCode, code: json.responseCode, body }
}

async function admin (app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown): Promise<{ status: number, body: Record<string, unknown> }> {
  const res = await app.inject({ method, url, headers: adminHeaders, ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}) })
  return { status: res.statusCode, body: res.json<Record<string, unknown>>() }
}

t.test('store unreachable: decided by the policy, journaled, replayed once when the store answers', async (t) => {
  const { inner, sw, publicApp, adminApp, logs } = await setUp(t)
  t.same((await admin(adminApp, 'GET', '/admin/v1/standin')).body.state, 'standby')
  sw.set('down')
  const ok = await auth(publicApp)
  t.equal(ok.code, '00', 'POS within the caps: approved in stand-in')
  t.equal(ok.status, 200)
  t.equal((await auth(publicApp, { channel: 'ATM' })).code, '05', 'a channel the policy disables: 05')
  t.equal((await auth(publicApp, { mcc: '7995' })).code, '05', 'a blocked MCC: 05')
  t.equal((await auth(publicApp, { transactionAmount: '200001' })).code, '05', 'over the channel\'s perTransactionMax: 05')
  const again = await publicApp.inject({ method: 'POST', url: EXTERNAL_AUTH_PATH, headers: platformHeaders(), payload: ok.body })
  t.equal(again.json<{ responseCode: string }>().responseCode, '00', 'a repeat of the reference: the same answer')
  const other = await publicApp.inject({ method: 'POST', url: EXTERNAL_AUTH_PATH, headers: platformHeaders(), payload: { ...ok.body, transactionAmount: '9999' } })
  t.equal(other.json<{ responseCode: string }>().responseCode, '05', 'the reference with another amount: a conflict, 05')
  const line = logs.find((l) => l.msg === 'decision' && l.reference === ok.body.transactionReferenceNumber)
  t.match(line, { code: '00', reason: 'approved', standIn: true }, 'the decision line says standIn')

  const codes = [ok.code]
  for (let i = 0; i < 6; i++) codes.push((await auth(publicApp)).code)
  t.same(codes, ['00', '00', '00', '00', '00', '05', '05'], 'perCard.count 5: the sixth approval of the card and later are declined')
  t.equal((await auth(publicApp, { last4Digits: '9999' })).code, '00', 'another card has caps of its own')

  const status = await admin(adminApp, 'GET', '/admin/v1/standin')
  t.match(status.body, { state: 'active', decisions: { approved: 6 }, amount: '60000', replayBacklog: { count: 6, amount: '60000' } })
  t.type(status.body.since, 'string')
  const ready = await publicApp.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 200, 'ready while stand-in can decide: the load balancer keeps the instance')
  t.equal(sw.authorizeCalls(), 0, 'nothing reached the store')
  t.equal((await inner.getCustomer('USI1'))?.available, 300_000)

  sw.set('up')
  // a decision that reaches the store ends stand-in and starts the replay
  const online = await auth(publicApp, { transactionAmount: '1' })
  t.equal(online.code, '00')
  for (let i = 0; i < 100 && (await admin(adminApp, 'GET', '/admin/v1/standin')).body.state !== 'standby'; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  const after = await admin(adminApp, 'GET', '/admin/v1/standin')
  t.match(after.body, { state: 'standby', since: null, replayBacklog: { count: 0 }, replayed: { applied: 6 } }, 'every stand-in approval replayed, the outage closed')
  t.equal((await inner.getCustomer('USI1'))?.available, 300_000 - 6 * 10_000 - 1, 'the six stand-in approvals (two cards) and the online one debited once')
  const rec = await admin(adminApp, 'GET', `/admin/v1/customers/USI1/decisions/${String(ok.body.transactionReferenceNumber)}`)
  t.match(rec.body, { code: '00', debit: 10000, standIn: true }, 'the record says standIn')
  const repeat = await publicApp.inject({ method: 'POST', url: EXTERNAL_AUTH_PATH, headers: platformHeaders(), payload: ok.body })
  t.equal(repeat.json<{ responseCode: string }>().responseCode, '00', 'a repeat after the replay: answered from the store')
  t.equal((await inner.getCustomer('USI1'))?.available, 300_000 - 6 * 10_000 - 1, 'nothing debited twice')
})

t.test('an unknown outcome is not stand-in material: 05 as before', async (t) => {
  const { sw, publicApp, adminApp } = await setUp(t)
  sw.set('unsure')
  t.equal((await auth(publicApp)).code, '05')
  t.match((await admin(adminApp, 'GET', '/admin/v1/standin')).body, { state: 'standby', replayBacklog: { count: 0 } })
  // its compensation can reach the store before teardown
  sw.set('up')
})

t.test('forced on and off with a reason, audited; forced off an unreachable store answers 05', async (t) => {
  const { inner, sw, publicApp, adminApp } = await setUp(t)
  t.equal((await admin(adminApp, 'POST', '/admin/v1/standin', { on: true })).status, 400, 'a reason is required')
  const on = await admin(adminApp, 'POST', '/admin/v1/standin', { on: true, reason: 'primary maintenance CHG-1' })
  t.match(on.body, { state: 'active', forced: { on: true, reason: 'primary maintenance CHG-1', keyId: 'ADMIN_TOKEN' } })
  t.equal((await auth(publicApp)).code, '00', 'forced on: decided in stand-in')
  t.equal(sw.authorizeCalls(), 0, 'without asking the store')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal((await inner.getCustomer('USI1'))?.available, 300_000, 'and nothing replayed while forced on')
  const off = await admin(adminApp, 'POST', '/admin/v1/standin', { on: false, reason: 'caps too loose for tonight' })
  t.match(off.body, { state: 'replaying', forced: { on: false } })
  for (let i = 0; i < 100 && (await inner.getCustomer('USI1'))?.available === 300_000; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal((await inner.getCustomer('USI1'))?.available, 290_000, 'forced off: the backlog is replayed')
  sw.set('down')
  t.equal((await auth(publicApp)).code, '05', 'forced off, store unreachable: 05')
  t.equal((await publicApp.inject({ method: 'GET', url: '/health/ready' })).statusCode, 503, 'and not ready')
  sw.set('up')
  const audit = inner.auditRecords().filter((r) => r.route === 'POST /admin/v1/standin')
  t.match(audit, [
    { keyId: 'ADMIN_TOKEN', scope: 'standin', outcome: 'done', before: { forced: null }, after: { forced: { on: true, reason: 'primary maintenance CHG-1' } } },
    { keyId: 'ADMIN_TOKEN', scope: 'standin', outcome: 'done', before: { forced: { on: true } }, after: { forced: { on: false, reason: 'caps too loose for tonight' } } }
  ], 'both changes audited with their reason')
  t.equal(audit.length, 2)
  t.equal((await admin(adminApp, 'POST', '/admin/v1/standin', { on: null, reason: 'back to automatic' })).body.forced, null, 'null ends the forcing')
})

t.test('a replay below zero: a metric, a log line naming the customer and reference, and a negative_balance exception', async (t) => {
  const { inner, sw, publicApp, adminApp, logs } = await setUp(t)
  await inner.debit('USI1', 295_000, 'drain')
  sw.set('down')
  const a = await auth(publicApp, { transactionAmount: '10000' })
  t.equal(a.code, '00')
  sw.set('up')
  // the store answers again for another card's decision (no customer: declined, nothing debited), which starts the
  // replay; a decision of USI1's own would race it for the balance the replay sees
  await auth(publicApp, { urn: 'USI-NONE', transactionAmount: '1' })
  for (let i = 0; i < 100 && !logs.some((l) => l.exception === 'negative_balance'); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.match(logs.find((l) => l.exception === 'negative_balance'), { urn: 'USI1', reference: a.body.transactionReferenceNumber, available: '-5000' })
  const metrics = await adminApp.inject({ method: 'GET', url: '/metrics' })
  t.match(metrics.body, /extauth_standin_negative_balances_total 1/)
  // queued after the log line, in the same replay
  let queue = await admin(adminApp, 'GET', '/admin/v1/reconciliation/exceptions?kind=negative_balance&urn=USI1')
  for (let i = 0; i < 100 && (queue.body.items as unknown[]).length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    queue = await admin(adminApp, 'GET', '/admin/v1/reconciliation/exceptions?kind=negative_balance&urn=USI1')
  }
  t.match(queue.body.items, [{ kind: 'negative_balance', status: 'open', urn: 'USI1', reference: a.body.transactionReferenceNumber, amount: '5000' }], 'in the settlement\'s exception queue')
})

t.test('without STANDIN_POLICY_FILE: not configured, and an unreachable store answers 05', async (t) => {
  const sw = switchedStore(new MemoryStore())
  const { publicApp, adminApp } = await build(t, { store: sw.store })
  t.same((await admin(adminApp, 'GET', '/admin/v1/standin')).body, { state: 'not_configured' })
  t.match(await admin(adminApp, 'POST', '/admin/v1/standin', { on: true, reason: 'x' }), { status: 503, body: { error: 'NOT_CONFIGURED' } })
  sw.set('down')
  t.equal((await auth(publicApp)).code, '05')
})

t.test('the console\'s queues page shows the stand-in state and the replay backlog', async (t) => {
  const { ConsoleClient, CONSOLE, textOf } = await import('../console/client.js')
  const { ADMIN_TOKEN } = await import('../helpers/config.js')
  const { sw, publicApp, adminApp } = await setUp(t)
  const client = new ConsoleClient(adminApp)
  await client.signIn(ADMIN_TOKEN)
  t.match(textOf((await client.get(`${CONSOLE}/queues`)).body), /Stand-in.*Standby: deciding with the store/s)
  sw.set('down')
  t.equal((await auth(publicApp, { transactionAmount: '1250' })).code, '00')
  const page = textOf((await client.get(`${CONSOLE}/queues`)).body)
  t.match(page, /Active: the store cannot be reached/)
  t.match(page, /1 approved \(1,250\), 0 declined/)
  t.match(page, /Not yet replayed\s*1 \(1,250\)/)
  sw.set('up')
})
