// The settlement in the console: a customer's held and ledger, the open reconciliation exceptions on the
// queues page (escaped like every value from a party), and a decision's clearing and expiry in its chain.
import t from 'tap'
import { CONSOLE, ConsoleClient, textOf } from './client.js'
import { KEYS, LAST4, URN, XSS, consoleFixture } from './fixture.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import { expireDue } from '../../src/settlement/expiry.js'

t.test('a customer shows available, held and ledger; the queues page lists open exceptions', async (t) => {
  const f = await consoleFixture(t, { env: { SETTLEMENT_MODE: 'holds' } })
  const s = settlementFor(f.deps.store)
  const r = await s.applyPosting({ platformId: 'PF-C1', type: 'purchase', reference: 'NEVER-DECIDED', urn: URN, last4: '', amount: 250, currency: '356', postedAt: '2026-11-20T10:00:00Z' }, 'S-C1', null)
  t.equal(r.outcome, 'force_post')
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  const customer = textOf((await c.get(`${CONSOLE}/customers/${URN}`)).body)
  t.match(customer, /Available/)
  t.match(customer, /Held/)
  t.match(customer, /Ledger/)
  const queues = await c.get(`${CONSOLE}/queues`)
  t.match(textOf(queues.body), `${r.exceptions[0] ?? ''} force_post ${URN} NEVER-DECIDED`)
  t.notMatch(queues.body, XSS)
})

t.test('the queues page lists a lifecycle_failed exception like any other', async (t) => {
  const { openLifecycleFailed } = await import('../../src/settlement/lifecycle-failed.js')
  const f = await consoleFixture(t)
  const s = settlementFor(f.deps.store)
  const x = await openLifecycleFailed(s, 'unload', 'UL-F1', { status: 'FAILED', reconcile: 'check it on the platform', urn: URN, amount: '300', fee: '5', hold: { state: 'held', amount: '305' }, createdAtMs: 1 })
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  t.match(textOf((await c.get(`${CONSOLE}/queues`)).body), `${x?.id ?? 'none'} lifecycle_failed ${URN} UL-F1 305 move nothing`)
})

t.test('a decision\'s chain shows its clearing by the statement and the expiry of its hold', async (t) => {
  const f = await consoleFixture(t, { env: { SETTLEMENT_MODE: 'holds' } })
  const s = settlementFor(f.deps.store)
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  const chain = async (ref: string): Promise<string> => textOf((await c.get(`${CONSOLE}/decisions/${URN}/${encodeURIComponent(ref)}`)).body)
  t.notMatch(await chain(f.refs.approved), /Cleared by|Hold expired/, 'neither before')
  const r = await s.applyPosting({ platformId: 'PF-C2', type: 'purchase', reference: f.refs.approved, urn: URN, last4: LAST4, amount: 1000, currency: '356', postedAt: '2026-11-20T10:00:00Z' }, 'S-C2', null)
  t.equal(r.outcome, 'cleared_partial')
  const cleared = await chain(f.refs.approved)
  t.match(cleared, /Cleared by the platform's statement: 1,000 posted \(less than the 1,250 authorized\)/)
  t.match(cleared, /settlement\.posted/, 'and its event listed')
  t.notMatch(cleared, /Hold expired/)
  // the other approval's hold expires (expiry run as of a year on)
  t.ok(await expireDue(s, Date.now() + 366 * 86_400_000) >= 1)
  const expired = await chain(f.refs.hostile)
  t.match(expired, /Hold expired at \d{4}-\d\d-\d\dT[\d:.]+Z: released, nothing cleared by then/)
  t.match(expired, /authorization\.expired/)
  t.notMatch(await chain(f.refs.rule), /Cleared by|Hold expired/, 'a decline has neither')
})
