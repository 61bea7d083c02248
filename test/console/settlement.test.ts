// The settlement in the console: a customer's held and ledger, and the open reconciliation exceptions on the
// queues page (escaped like every value from a party).
import t from 'tap'
import { CONSOLE, ConsoleClient, textOf } from './client.js'
import { KEYS, URN, XSS, consoleFixture } from './fixture.js'
import { settlementFor } from '../../src/settlement/for-store.js'

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
