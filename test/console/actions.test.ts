// Console actions: each asks for a reason and is audited with the key id and the reason, runs the store
// operation the admin API runs (the balance moves once; the same reference again is a replay); a key without
// the scope sees no form and its forged POST is refused 403 and audited as refused; a POST without the form
// token is refused and changes nothing; form values are converted strictly.
import t from 'tap'
import { CONSOLE, ConsoleClient, textOf } from './client.js'
import { KEYS, LAST4, URN, consoleFixture } from './fixture.js'
import type { AuditRecord } from '../../src/domain/audit.js'
import { MemoryStore } from '../../src/store/memory.js'

const customer = `${CONSOLE}/customers/${URN}`

function audits (store: unknown): readonly AuditRecord[] {
  return (store as MemoryStore).auditRecords()
}

t.test('credit, debit, reverse and card status with a reason, each audited with the key id and reason', async (t) => {
  const f = await consoleFixture(t)
  const store = f.deps.store
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.agent.key)
  const before = (await store.getCustomer(URN))?.available ?? 0

  const page = await c.get(customer)
  t.equal(page.statusCode, 200)
  for (const form of ['/credit"', '/debit"', `/cards/${LAST4}/status"`, `/cards/${LAST4}/controls"`]) t.match(page.body, `action="${customer}${form}`, `the agent sees ${form}`)

  const noReason = await c.post(`${customer}/credit`, { amount: '500', reference: 'c-1', reason: '' })
  t.equal(noReason.statusCode, 303)
  t.match(textOf((await c.follow(noReason)).body), 'Not done: Give a reason')
  t.equal((await store.getCustomer(URN))?.available, before, 'nothing credited without a reason')

  const credit = await c.post(`${customer}/credit`, { amount: '500', reference: 'c-1', reason: 'goodwill after complaint 77' })
  t.match(textOf((await c.follow(credit)).body), 'Credited 500; available balance now')
  t.equal((await store.getCustomer(URN))?.available, before + 500)
  const again = await c.post(`${customer}/credit`, { amount: '500', reference: 'c-1', reason: 'double click' })
  t.match(textOf((await c.follow(again)).body), 'was already used: nothing more done')
  t.equal((await store.getCustomer(URN))?.available, before + 500, 'the same reference is a replay')

  const bad = await c.post(`${customer}/debit`, { amount: '5.00', reference: 'd-1', reason: 'fee' })
  t.match(textOf((await c.follow(bad)).body), 'is not an amount')
  const debit = await c.post(`${customer}/debit`, { amount: '200', reference: 'd-1', reason: 'card fee waived wrongly' })
  t.match(textOf((await c.follow(debit)).body), 'Debited 200')
  t.equal((await store.getCustomer(URN))?.available, before + 300)

  const rec = audits(store).find((a) => a.route === 'POST /admin/console/customers/:urn/credit')
  t.match(rec, { keyId: KEYS.agent.id, reason: 'goodwill after complaint 77', outcome: 'done', target: { urn: URN, reference: 'c-1', amount: '500' }, scope: 'money:write' })

  const block = await c.post(`${customer}/cards/${LAST4}/status`, { status: 'BLOCKED', reason: 'cardholder reports it stolen' })
  t.match(textOf((await c.follow(block)).body), `Card ${LAST4} is now BLOCKED`)
  t.equal((await store.getCustomer(URN))?.cards[LAST4], 'BLOCKED')
  const badStatus = await c.post(`${customer}/cards/${LAST4}/status`, { status: 'GONE', reason: 'x'.repeat(5) })
  t.match(textOf((await c.follow(badStatus)).body), 'Choose one of ACTIVE')
  t.equal((await store.getCustomer(URN))?.cards[LAST4], 'BLOCKED')

  const blocked = await c.post(`${customer}/status`, { status: 'BLOCKED', reason: 'fraud team hold' })
  t.match(textOf((await c.follow(blocked)).body), `Customer ${URN} is now BLOCKED`)
  t.equal((await store.getCustomer(URN))?.status, 'BLOCKED')
  const { decide } = await import('./fixture.js')
  t.equal((await decide(f, { transactionAmount: '10' })).code, '05', 'a blocked customer is declined')
  await c.post(`${customer}/status`, { status: 'ACTIVE', reason: 'hold lifted' })
  t.equal((await store.getCustomer(URN))?.status, 'ACTIVE')
  const ghost = await c.post(`${CONSOLE}/customers/NOBODY/status`, { status: 'ACTIVE', reason: 'typo' })
  t.match(textOf((await c.follow(ghost)).body), 'Customer not found')
  t.equal(await store.getCustomer('NOBODY'), null, 'no customer made by a status change')

  const cardNumber = await c.post(`${customer}/credit`, { amount: '1', reference: 'c-2', reason: 'card 4111 1111 1111 1111 refund' })
  t.match(textOf((await c.follow(cardNumber)).body), 'looks like it holds a card number')
  t.notOk(audits(store).some((a) => JSON.stringify(a).includes('4111 1111')), 'no card number in the audit')
})

t.test('reverse a decision, in part or whole, once', async (t) => {
  const f = await consoleFixture(t)
  const store = f.deps.store
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.agent.key)
  const dpage = `${CONSOLE}/decisions/${URN}/${f.refs.approved}`
  const before = (await store.getCustomer(URN))?.available ?? 0
  t.match((await c.get(dpage)).body, `action="${dpage}/reverse"`)
  const part = await c.post(`${dpage}/reverse`, { amount: '250', reason: 'merchant refunded part' })
  t.match(textOf((await c.follow(part)).body), 'Released 250')
  t.equal((await store.getCustomer(URN))?.available, before + 250)
  const over = await c.post(`${dpage}/reverse`, { amount: '5000', reason: 'too much' })
  t.match(textOf((await c.follow(over)).body), 'Not done:')
  t.equal((await store.getCustomer(URN))?.available, before + 250, 'nothing released past the hold')
  const twice = await c.post(`${dpage}/reverse`, { amount: '', reason: 'rest of it' })
  const after = await c.follow(twice)
  t.match(textOf(after.body), 'Not done: this decision was already reversed')
  t.notMatch(after.body, '/reverse"', 'no reversal form once reversed')
  t.equal((await store.getCustomer(URN))?.available, before + 250, 'a decision is reversed once')
  const recs = audits(store).filter((a) => a.route === 'POST /admin/console/decisions/:urn/:ref/reverse')
  t.same(recs.map((r) => r.reason), ['merchant refunded part'])
  t.equal(recs[0]?.target.ref, f.refs.approved)

  const other = `${CONSOLE}/decisions/${URN}/${f.refs.hostile}`
  const whole = await c.post(`${other}/reverse`, { amount: '', reason: 'duplicate charge' })
  t.match(textOf((await c.follow(whole)).body), 'Released 700')
  t.equal((await store.getCustomer(URN))?.available, before + 950)
})

t.test('card controls: only what changed is saved, and the next decision follows it', async (t) => {
  const f = await consoleFixture(t)
  const store = f.deps.store
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.agent.key)
  const fields: Record<string, string> = { reason: 'cardholder asked on the phone' }
  for (const k of ['POS', 'ATM', 'ECOM', 'POS-Contactless', 'international']) fields[`${k}.enabled`] = 'on'
  fields['POS.perTransactionMax'] = '1000'
  const res = await c.post(`${customer}/cards/${LAST4}/controls`, fields)
  t.match(textOf((await c.follow(res)).body), 'saved: POS changed')
  t.same(await store.getCardControls(URN, LAST4), { POS: { perTransactionMax: 1000 } }, 'only the changed field is the card\'s own')
  const { decide } = await import('./fixture.js')
  t.equal((await decide(f, { transactionAmount: '1001' })).code, '61', 'over the new limit: 61')
  t.equal((await decide(f, { transactionAmount: '1000' })).code, '00', 'at the limit: 00')
  const off = { ...fields }
  delete off['ECOM.enabled']
  await c.post(`${customer}/cards/${LAST4}/controls`, off)
  t.same(await store.getCardControls(URN, LAST4), { POS: { perTransactionMax: 1000 }, ECOM: { enabled: false } })
  const badLimit = await c.post(`${customer}/cards/${LAST4}/controls`, { ...fields, 'ATM.dailyMax': '-5' })
  t.match(textOf((await c.follow(badLimit)).body), 'is not an amount')
  t.equal(audits(store).filter((a) => a.route === 'POST /admin/console/customers/:urn/cards/:last4/controls').length, 2)
})

t.test('a read key sees no action, and its forged POSTs are refused 403 and audited as refused', async (t) => {
  const f = await consoleFixture(t)
  const store = f.deps.store
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.reader.key)
  const page = await c.get(customer)
  t.equal(page.statusCode, 200)
  t.notMatch(page.body, /method="post" action="\/admin\/console\/(customers|decisions)/, 'no action form on the customer page')
  const dpage = await c.get(`${CONSOLE}/decisions/${URN}/${f.refs.approved}`)
  t.notMatch(dpage.body, '/reverse"', 'no reversal form')
  const before = await store.getCustomer(URN)
  const posts: Array<[string, Record<string, string>, string]> = [
    [`${customer}/credit`, { amount: '500', reference: 'forged-1', reason: 'forged' }, 'money:write'],
    [`${customer}/debit`, { amount: '500', reference: 'forged-2', reason: 'forged' }, 'money:write'],
    [`${customer}/cards/${LAST4}/status`, { status: 'BLOCKED', reason: 'forged' }, 'customers:write'],
    [`${customer}/status`, { status: 'CLOSED', reason: 'forged' }, 'customers:write'],
    [`${customer}/cards/${LAST4}/controls`, { 'POS.enabled': 'on', reason: 'forged' }, 'controls:write'],
    [`${CONSOLE}/decisions/${URN}/${f.refs.approved}/reverse`, { reason: 'forged' }, 'money:write'],
    [`${CONSOLE}/queues/events/evt_1_1_0/resend`, { reason: 'forged' }, 'events'],
    [`${CONSOLE}/rules/reload`, { reason: 'forged' }, 'rules:reload']
  ]
  for (const [url, fields, scope] of posts) {
    const res = await c.post(url, fields)
    t.equal(res.statusCode, 403, `${url}: 403`)
    t.match(textOf(res.body), `lacks the scope ${scope}`)
  }
  t.same(await store.getCustomer(URN), before, 'nothing changed')
  t.same(await store.getCardControls(URN, LAST4), {})
  const refused = audits(store).filter((a) => a.outcome === 'refused')
  t.equal(refused.length, posts.length, 'each refusal audited')
  t.ok(refused.every((a) => a.keyId === KEYS.reader.id))
})

t.test('a POST without the session\'s form token changes nothing', async (t) => {
  const f = await consoleFixture(t)
  const store = f.deps.store
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.agent.key)
  await c.get(customer)
  const before = await store.getCustomer(URN)
  const none = await c.post(`${customer}/credit`, { amount: '500', reference: 'x-1', reason: 'cross-site' }, { csrf: false })
  t.equal(none.statusCode, 403)
  t.match(textOf(none.body), 'did not come from this console session')
  const other = new ConsoleClient(f.adminApp)
  await other.signIn(KEYS.agent.key)
  await other.get(customer)
  const wrong = await c.post(`${customer}/credit`, { _csrf: other.csrf, amount: '500', reference: 'x-2', reason: 'token of another session' })
  t.equal(wrong.statusCode, 403)
  const anonymous = new ConsoleClient(f.adminApp)
  const noSession = await anonymous.post(`${customer}/credit`, { amount: '500', reference: 'x-3', reason: 'no session' }, { csrf: false })
  t.equal(noSession.statusCode, 401)
  t.same(await store.getCustomer(URN), before, 'nothing credited')
})
