// Redis down at start: the log says which Redis and why (host, port, ECONNREFUSED) at start and in the line of
// every store error, never "extauth ready" until Redis answers, and "extauth ready" once it does. No
// REDIS_URL password reaches a log line.
import t from 'tap'
import { request } from 'undici'
import { privateRedis } from '../helpers/redis.js'
import { startServer } from '../helpers/server-process.js'
import { authBody, platformHeaders } from '../helpers/config.js'

t.test('Redis unreachable at start, then started', async (t) => {
  const redis = await privateRedis(t)
  await redis.stop()
  const where = `127.0.0.1:${redis.port}`
  // not about overload: a request shed while the child still compiles would say nothing about Redis
  const server = await startServer(t, { env: { REDIS_URL: `redis://:s3cret-pass@${where}`, REDIS_KEY_PREFIX: 'down:', SHED_EVENT_LOOP_DELAY_MS: '0' } })

  const atStart = await server.waitForLog(l => typeof l.msg === 'string' && l.msg.startsWith('redis unreachable at'), 30_000)
  t.equal(atStart.msg, `redis unreachable at ${where}: ECONNREFUSED; not ready until it answers`)
  t.same([atStart.redis, atStart.cause], [where, 'ECONNREFUSED'])
  const listening = await server.waitForLog(l => typeof l.msg === 'string' && l.msg.startsWith('extauth listening, not ready'), 30_000)
  t.equal(listening.msg, `extauth listening, not ready: redis ${where} unreachable: ECONNREFUSED`)
  t.notOk(server.logs().some(l => l.msg === 'extauth ready'), 'no "extauth ready" while Redis is down')

  const res = await request(server.publicUrl + '/api/v1/externalAuth', { method: 'POST', headers: platformHeaders(), body: JSON.stringify(authBody()) })
  const answer = await res.body.json() as { responseCode: string }
  t.equal(answer.responseCode, '05')
  const storeError = await server.waitForLog(l => typeof l.msg === 'string' && l.msg.startsWith('store error'), 10_000)
  t.equal(storeError.msg, `store error; answered 05: redis ${where} unreachable: ECONNREFUSED`)
  t.same([storeError.redis, storeError.cause], [where, 'ECONNREFUSED'])

  await redis.restart()
  const ready = await server.waitForLog(l => l.msg === 'extauth ready', 30_000)
  t.equal(ready.store, 'redis')
  t.notOk(server.rawLogs.some(l => l.includes('s3cret-pass')), 'the password in REDIS_URL is never logged')
})
