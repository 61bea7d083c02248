// The authorize script as a Redis function (src/store/functions.ts): loaded when the store connects and
// called with FCALL; loaded again when Redis lost it, the decision applied once; EVALSHA where Redis has no
// functions. Each on a redis-server of its own, whose command counts are this test's alone.
import t from 'tap'
import type { Redis } from 'ioredis'
import { privateRedis } from '../helpers/redis.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { AUTHORIZE_LIBRARY, AUTHORIZE_LIBRARY_NAME } from '../../src/store/functions.js'
import { authInput, limit } from './contract.js'

async function calls (admin: Redis, command: string): Promise<number> {
  const line = (await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith(`cmdstat_${command}:`))
  return Number(/calls=(\d+)/.exec(line ?? '')?.[1] ?? 0)
}

async function libraries (admin: Redis): Promise<string[]> {
  const list = await admin.call('FUNCTION', 'LIST') as unknown[][]
  return list.map((lib) => String(lib[lib.indexOf('library_name') + 1]))
}

async function storeOn (t: Parameters<typeof privateRedis>[0], url: string, connect = true, urn = 'U1'): Promise<RedisStore> {
  const store = new RedisStore(createRedisClient({ url }), { prefix: 'fn:' })
  t.teardown(async () => { await store.close() })
  if (connect) await store.connect()
  else await store.client.connect()
  await store.putCustomer(urn, {})
  await store.credit(urn, 1000, 'open')
  return store
}

t.test('authorize runs as a function, loaded when the store connects', async (t) => {
  const redis = await privateRedis(t)
  const admin = await redis.admin()
  const store = await storeOn(t, redis.url)
  t.equal(store.usesFunctions, true)
  t.same(await libraries(admin), [AUTHORIZE_LIBRARY_NAME])
  await admin.config('RESETSTAT')
  for (const debitAmount of [100, 200, 300]) t.match(await store.authorize(authInput('U1', { debitAmount })), { code: '00' })
  t.equal(await calls(admin, 'fcall'), 3, 'three FCALLs')
  t.equal(await calls(admin, 'evalsha') + await calls(admin, 'eval'), 0, 'no script sent')
  t.equal((await store.getCustomer('U1'))?.available, 400)
})

t.test('a Redis that lost the library: the next decision loads it again and is applied once', async (t) => {
  const redis = await privateRedis(t)
  const admin = await redis.admin()
  const store = await storeOn(t, redis.url)
  t.match(await store.authorize(authInput('U1', { debitAmount: 100 })), { code: '00', available: 900 })
  await admin.call('FUNCTION', 'FLUSH')
  t.same(await libraries(admin), [])
  const input = authInput('U1', { debitAmount: 250 })
  t.match(await store.authorize(input), { code: '00', available: 650, replayed: false })
  t.match(await store.authorize(input), { code: '00', replayed: true }, 'its retry is a replay')
  t.equal((await store.getCustomer('U1'))?.available, 650, '1000 - 100 - 250')
  t.same(await libraries(admin), [AUTHORIZE_LIBRARY_NAME], 'loaded again')
  t.equal(store.usesFunctions, true)
})

t.test('another version\'s library beside ours changes nothing for either', async (t) => {
  const redis = await privateRedis(t)
  const admin = await redis.admin()
  await admin.call('FUNCTION', 'LOAD', "#!lua name=extauth_0000000000000000\nredis.register_function('extauth_authorize_0000000000000000', function () return 'other' end)")
  const store = await storeOn(t, redis.url)
  t.match(await store.authorize(authInput('U1', { debitAmount: 100 })), { code: '00', available: 900 })
  t.same((await libraries(admin)).sort(), ['extauth_0000000000000000', AUTHORIZE_LIBRARY_NAME].sort())
  t.equal(await admin.call('FCALL', 'extauth_authorize_0000000000000000', '0'), 'other')
})

for (const connect of [true, false]) {
  t.test(`a Redis without functions: authorize with EVALSHA (${connect ? 'known at connect' : 'found on the first decision'})`, async (t) => {
    const redis = await privateRedis(t, { args: ['--rename-command', 'FUNCTION', '', '--rename-command', 'FCALL', ''] })
    const admin = await redis.admin()
    const store = await storeOn(t, redis.url, connect)
    t.equal(store.usesFunctions, connect ? false : null)
    await admin.config('RESETSTAT')
    const input = authInput('U1', { debitAmount: 100 })
    t.match(await store.authorize(input), { code: '00', available: 900 })
    t.match(await store.authorize(input), { code: '00', replayed: true })
    t.equal(store.usesFunctions, false)
    t.equal(await calls(admin, 'evalsha') + await calls(admin, 'eval'), 2, 'both sent as a script')
    t.equal((await store.getCustomer('U1'))?.available, 900)
  })
}

t.test('decisions in flight when Redis lost the library wait for one load', async (t) => {
  const redis = await privateRedis(t)
  const admin = await redis.admin()
  const store = await storeOn(t, redis.url)
  await admin.call('FUNCTION', 'FLUSH')
  await admin.config('RESETSTAT')
  const answers = await Promise.all(Array.from({ length: 40 }, async () => await store.authorize(authInput('U1', { debitAmount: 10 }))))
  t.ok(answers.every((a) => a.code === '00'), 'all approved')
  t.equal(await calls(admin, 'function|load'), 1, 'one FUNCTION LOAD')
  t.equal((await store.getCustomer('U1'))?.available, 600, '1000 - 40 x 10')
})

for (const [name, rules] of [['FUNCTION LOAD allowed, FCALL not', '+@all -fcall'], ['neither FUNCTION nor FCALL', '+@all -function -fcall']] as const) {
  t.test(`a Redis user with ${name}: authorize with EVALSHA`, async (t) => {
    const redis = await privateRedis(t)
    const admin = await redis.admin()
    await admin.call('ACL', 'SETUSER', 'extauth', 'on', '>pw', '~*', '&*', ...rules.split(' '))
    const store = await storeOn(t, `redis://extauth:pw@127.0.0.1:${redis.port}`)
    const input = authInput('U1', { debitAmount: 100 })
    t.match(await store.authorize(input), { code: '00', available: 900 })
    t.match(await store.authorize(input), { code: '00', replayed: true })
    t.equal(store.usesFunctions, false)
    t.equal((await store.getCustomer('U1'))?.available, 900)
  })
}

t.test('the function keeps nothing of one decision for the next', async (t) => {
  // the library with a probe beside the function: how many entries the definitions' per-call tables hold
  const redis = await privateRedis(t)
  const admin = await redis.admin()
  const probe = `${AUTHORIZE_LIBRARY}
redis.register_function('probe_call_state', function ()
  local n = 0
  for _ in pairs(covered) do n = n + 1 end
  for _ in pairs(ttlSeen) do n = n + 1 end
  return n
end)
`
  const store = await storeOn(t, redis.url)
  await admin.call('FUNCTION', 'LOAD', 'REPLACE', probe)
  const limits = [limit({ ruleId: 'a', measure: 'amount', max: 1 }), limit({ ruleId: 'b', max: 100 })]
  for (let i = 0; i < 20; i++) {
    const urn = `P${i}`
    await store.putCustomer(urn, {})
    await store.credit(urn, 1000, 'open')
    t.match(await store.authorize(authInput(urn, { debitAmount: 100, limits })), { code: '65', reason: 'limit', ruleId: 'a' }, `${urn}: over the amount limit`)
  }
  t.equal(store.usesFunctions, true)
  t.ok(Number(await admin.call('FCALL', 'probe_call_state', '0')) <= 4, 'at most the last decision\'s two windows, twice')
})
