// The console behind a load balancer without sticky sessions: two instances on one Redis. A session signed in
// on one is used on the other, its form token holds on both, sign-out on one ends it on both; the session is
// one Redis key named by the SHA-256 of the session id, expiring after the idle timeout from its last use,
// and holds the key's id and scopes, never the key.
import t from 'tap'
import { createHash } from 'node:crypto'
import { build, type Built } from '../helpers/app.js'
import { SHARED_REDIS_URL, sharedRedisStore } from '../helpers/redis.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { RedisAuditTrail } from '../../src/access/audit-trail.js'
import { RedisSessionStore } from '../../src/console/redis-session-store.js'
import { CONSOLE, ConsoleClient } from './client.js'
import { KEYS } from './fixture.js'
import { keysFile } from '../helpers/admin-keys.js'

const IDLE_MS = 60_000

interface Teardown { teardown: (fn: () => unknown) => void }

async function twoInstances (t: Teardown): Promise<{ a: Built, b: Built, store: RedisStore }> {
  const store = await sharedRedisStore(t)
  const other = new RedisStore(createRedisClient({ url: SHARED_REDIS_URL }), { prefix: store.keys.prefix })
  await other.connect()
  t.teardown(async () => { await other.close() })
  const keys = keysFile(t, Object.values(KEYS))
  const env = { ADMIN_KEYS_FILE: keys.path, CONSOLE_IDLE_TIMEOUT_MS: String(IDLE_MS) }
  return { a: await build(t, { store, env }), b: await build(t, { store: other, env }), store }
}

/** the console's session keys in Redis, with their values */
async function sessionKeys (store: RedisStore): Promise<Array<{ key: string, value: string }>> {
  const keys = await store.client.keys(`${store.keys.prefix}{console}:s:*`)
  return await Promise.all(keys.map(async (key) => ({ key, value: await store.client.get(key) ?? '' })))
}

t.test('signed in on A, used on B, signed out on B: refused on A', async (t) => {
  const { a, b, store } = await twoInstances(t)
  const onA = new ConsoleClient(a.adminApp)
  const signedIn = await onA.signIn(KEYS.agent.key)
  t.equal(signedIn.statusCode, 303)

  const onB = new ConsoleClient(b.adminApp)
  onB.cookie = onA.cookie
  const page = await onB.get(`${CONSOLE}/decisions`)
  t.equal(page.statusCode, 200, 'B knows the session')
  t.match(page.body, KEYS.agent.id)

  const [kept, ...more] = await sessionKeys(store)
  t.equal(more.length, 0, 'one session key')
  const sessionId = decodeURIComponent(onA.cookie.split('=')[1] as string).split('.')[0] as string
  t.equal(kept?.key, `${store.keys.prefix}{console}:s:${createHash('sha256').update(sessionId).digest('hex')}`, 'named by the SHA-256 of the session id')
  const held = JSON.parse(kept?.value ?? '{}') as Record<string, unknown>
  t.equal(held.keyId, KEYS.agent.id)
  t.same(held.scopes, [...KEYS.agent.scopes].sort())
  t.notOk(kept?.value.includes(KEYS.agent.key), 'not the key')
  t.notOk(kept?.value.includes(createHash('sha256').update(KEYS.agent.key).digest('hex')), 'nor its SHA-256')

  // the time without activity starts again on every use, on whichever instance
  await store.client.pexpire(kept?.key ?? '', 5_000)
  t.equal((await onA.get(`${CONSOLE}/decisions`)).statusCode, 200)
  const ttl = await store.client.pttl(kept?.key ?? '')
  t.ok(ttl > 5_000 && ttl <= IDLE_MS, `refreshed to the idle timeout on use (${ttl} ms)`)

  // the form token is the session's, wherever the form was shown: a form of A posted to B is taken
  const credited = await onB.post(`${CONSOLE}/customers/URN-SHARED-1/credit`, { amount: '100', reference: 'shared-1', reason: 'test of two instances' })
  t.equal(credited.statusCode, 303, 'a form shown by A, posted to B, passes the CSRF check')
  // and another session's token is refused on either
  const stranger = new ConsoleClient(b.adminApp)
  await stranger.signIn(KEYS.reader.key)
  const forged = await onB.post(`${CONSOLE}/sign-out`, { _csrf: stranger.csrf })
  t.equal(forged.statusCode, 403, 'another session\'s form token is refused')

  const out = await onB.post(`${CONSOLE}/sign-out`, {})
  t.equal(out.statusCode, 303)
  const after = await onA.get(`${CONSOLE}/decisions`)
  t.equal(after.statusCode, 303, 'signed out on B: refused on A')
  t.match(after.headers.location, 'ended=1')
  t.notOk((await sessionKeys(store)).some((k) => k.value.includes(KEYS.agent.id)), 'the session is gone from Redis')

  // sign-in and sign-out are in the shared audit trail, with the key id
  const records = (await new RedisAuditTrail(store.client, store.keys.prefix).search({ keyId: KEYS.agent.id, limit: 20 })).items
  t.same(records.filter((r) => r.route.includes('/sign-')).map((r) => [r.route, r.outcome]).reverse(), [
    ['POST /admin/console/sign-in', 'done'],
    ['POST /admin/console/sign-out', 'done']
  ])
  t.notOk(a.rawLogs.concat(b.rawLogs).some((l) => l.includes(KEYS.agent.key) || l.includes(sessionId)), 'neither the key nor the session id in a log line')
})

t.test('a session that expired in Redis is over on every instance', async (t) => {
  const { a, b, store } = await twoInstances(t)
  const onA = new ConsoleClient(a.adminApp)
  await onA.signIn(KEYS.reader.key)
  const [kept] = await sessionKeys(store)
  // as Redis does once the idle timeout has passed without a request
  await store.client.pexpire(kept?.key ?? '', 1)
  while (await store.client.exists(kept?.key ?? '') === 1) await new Promise((resolve) => setImmediate(resolve))
  const onB = new ConsoleClient(b.adminApp)
  onB.cookie = onA.cookie
  const ended = await onB.get(`${CONSOLE}/decisions`)
  t.equal(ended.statusCode, 303)
  t.match(ended.headers.location, 'ended=1')
})

t.test('past the bound the least recently used session goes; sign-in pages push no signed-in session out', async (t) => {
  const store = await sharedRedisStore(t)
  let now = 1_000
  const sessions = new RedisSessionStore(store.client, store.keys.prefix, IDLE_MS, 2, () => now)
  const set = async (id: string, v: Record<string, unknown>): Promise<void> => {
    await new Promise<void>((resolve, reject) => { sessions.set(id, v as never, (err) => { if (err === undefined || err === null) resolve(); else reject(err as Error) }) })
  }
  const get = async (id: string): Promise<unknown> => await new Promise((resolve, reject) => {
    sessions.get(id, (err, s) => { if (err === null || err === undefined) resolve(s ?? null); else reject(err as Error) })
  })
  await set('in-1', { keyId: 'k1', scopes: ['read'] })
  now++
  await set('in-2', { keyId: 'k2', scopes: ['read'] })
  for (let i = 0; i < 10; i++) { now++; await set(`out-${i}`, { _csrf: 'x' }) }
  t.ok(await get('in-1'), 'a flood of sign-in pages pushes no signed-in person out')
  t.ok(await get('in-2'))
  t.equal(await get('out-0'), null, 'the oldest sign-in page\'s session went')
  t.ok(await get('out-9'))
  now++
  await get('in-1')
  now++
  await set('in-3', { keyId: 'k3', scopes: ['read'] })
  t.equal(await get('in-2'), null, 'the least recently used signed-in session went')
  t.ok(await get('in-1'), 'used since: kept')
  t.ok(await get('in-3'))
})
