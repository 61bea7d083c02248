// The console on the Redis store: the same pages and actions read the journal and the audit trail of Redis
// (a customer's audit read from its one bucket), and an action's reason survives the store's script.
import t from 'tap'
import { sharedRedisStore } from '../helpers/redis.js'
import { CONSOLE, ConsoleClient, textOf } from './client.js'
import { KEYS, LAST4, URN, XSS, consoleFixture } from './fixture.js'

t.test('on Redis: search, a decision, an action with its reason in the customer\'s audit', async (t) => {
  const store = await sharedRedisStore(t)
  const f = await consoleFixture(t, { store })
  const c = new ConsoleClient(f.adminApp)
  await c.signIn(KEYS.agent.key)
  const found = textOf((await c.get(`${CONSOLE}/decisions?reference=${encodeURIComponent(f.refs.rule)}`)).body)
  t.match(found, `${f.refs.rule} ${URN} ${LAST4} 300 05`)
  const why = textOf((await c.get(`${CONSOLE}/decisions/${URN}/${f.refs.rule}`)).body)
  t.match(why, 'Deciding rule block-gambling')
  const before = (await store.getCustomer(URN))?.available ?? 0
  const res = await c.post(`${CONSOLE}/customers/${URN}/credit`, { amount: '700', reference: 'redis-c1', reason: `goodwill ${XSS}` })
  const page = await c.follow(res)
  t.match(textOf(page.body), 'Credited 700')
  t.equal((await store.getCustomer(URN))?.available, before + 700)
  t.match(textOf(page.body).replace(/ ,/g, ','), `POST /admin/console/customers/:urn/credit urn= ${URN}, amount=700, reference=redis-c1 done goodwill ${XSS}`, 'the customer\'s audit, with the reason')
  t.notMatch(page.body, /<script>alert/)
  const audit = textOf((await c.get(`${CONSOLE}/audit?keyId=${KEYS.agent.id}`)).body)
  t.match(audit, `goodwill ${XSS}`)
})
