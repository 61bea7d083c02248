// Forcing stand-in from the queues page: a key with the standin scope forces it on or off on this instance, or
// ends the forcing, with a reason, as POST /admin/v1/standin does (the instance's state changes, the audit
// trail has the key, the reason, before and after); a form without a reason or with another word changes
// nothing; a key without the scope sees no form and its forged POST is refused 403 and audited.
import t from 'tap'
import { CONSOLE, ConsoleClient, textOf } from './client.js'
import { KEYS, STANDIN_OPERATOR as OPERATOR, standInConsoleFixture } from './fixture.js'
import type { MemoryStore } from '../../src/store/memory.js'

const queues = `${CONSOLE}/queues`
const force = `${CONSOLE}/queues/standin/force`

t.test('an operator forces stand-in on and ends it, with a reason; a reader cannot', async (t) => {
  const f = await standInConsoleFixture(t)
  const standIn = f.deps.standIn
  if (standIn === undefined) throw new Error('stand-in not configured')
  const store = f.deps.store as MemoryStore

  const reader = new ConsoleClient(f.adminApp)
  await reader.signIn(KEYS.reader.key)
  const seen = await reader.get(queues)
  t.match(textOf(seen.body), 'Standby: deciding with the store.', 'a reader sees the state')
  t.notMatch(seen.body, `action="${force}"`, 'and no form')
  const forged = await reader.post(force, { force: 'on', reason: 'forged' })
  t.equal(forged.statusCode, 403)
  t.equal(standIn.forced, null, 'the forged POST changed nothing')
  t.equal(store.auditRecords().filter((a) => a.outcome === 'refused' && a.route === 'POST /admin/console/queues/standin/force' && a.keyId === KEYS.reader.id).length, 1, 'its refusal audited')

  const c = new ConsoleClient(f.adminApp)
  await c.signIn(OPERATOR.key)
  t.match((await c.get(queues)).body, `action="${force}"`, 'the operator has the form')
  t.match(textOf((await c.follow(await c.post(force, { force: 'on', reason: '' }))).body), 'Give a reason')
  t.match(textOf((await c.follow(await c.post(force, { force: 'sideways', reason: 'a typo' }))).body), 'Choose one of on, off, end')
  t.equal(standIn.forced, null, 'refused forms changed nothing')

  const on = await c.follow(await c.post(force, { force: 'on', reason: 'Redis primary under maintenance CHG-1234' }))
  t.match(textOf(on.body), 'Stand-in forced on on this instance')
  t.match(standIn.forced, { on: true, reason: 'Redis primary under maintenance CHG-1234', keyId: OPERATOR.id })
  t.equal(standIn.active, true, 'the instance decides in stand-in')
  t.match(textOf(on.body), `on by ${OPERATOR.id}`, 'the page shows who forced it')
  t.match(textOf(on.body), 'Redis primary under maintenance CHG-1234')

  const end = await c.follow(await c.post(force, { force: 'end', reason: 'maintenance over' }))
  t.match(textOf(end.body), 'Stand-in forcing ended on this instance')
  t.equal(standIn.forced, null)
  t.equal(standIn.active, false)

  const audit = store.auditRecords().filter((a) => a.route === 'POST /admin/console/queues/standin/force' && a.outcome === 'done')
  t.equal(audit.length, 2, 'each change audited')
  t.match(audit[0], { keyId: OPERATOR.id, reason: 'Redis primary under maintenance CHG-1234', before: { forced: null }, after: { forced: { on: true, keyId: OPERATOR.id } } })
  t.match(audit[1], { reason: 'maintenance over', before: { forced: { on: true } }, after: { forced: null } })
})
