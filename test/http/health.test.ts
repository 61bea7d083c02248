// Liveness and readiness (README "Operating it"): ready while the store answers and the process is not shutting
// down; with the store's Redis gone, readiness turns 503 and decisions answer 05 at once, and both recover
// when Redis is back, without a restart.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { privateRedis } from '../helpers/redis.js'
import { adminClient, auth, authBody, buildApp, checkInjected, freshUrn, metricValue } from '../helpers/http-checks.js'
import { ADMIN_TOKEN } from '../helpers/config.js'

async function ready (app: FastifyInstance): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'GET', url: '/health/ready' })
}

/** Polls readiness until it answers `status`; the bound (`ms`) only ends a wait that would never end. */
async function readyBecomes (app: FastifyInstance, status: number, ms = 15_000): Promise<LightMyRequestResponse> {
  const until = Date.now() + ms
  for (;;) {
    const res = await ready(app)
    if (res.statusCode === status || Date.now() > until) return res
    await sleep(25)
  }
}

t.test('live and ready on the memory store; 503 while shutting down', async t => {
  const { publicApp, deps } = await buildApp(t)
  const live = await publicApp.inject({ method: 'GET', url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })

  let res = await ready(publicApp)
  t.equal(res.statusCode, 200, 'ready')
  t.same(res.json(), { status: 'ok' })

  deps.shutdown.started = true
  res = await ready(publicApp)
  t.equal(res.statusCode, 503, 'not ready while shutting down')
  t.match(res.json(), { status: 'unavailable', reasons: ['shutting_down'] })
  const stillLive = await publicApp.inject({ method: 'GET', url: '/health/live' })
  t.equal(stillLive.statusCode, 200, 'still live')
  // requests that still arrive are answered
  checkInjected(t, await auth(publicApp, authBody({ urn: freshUrn() })), { status: 200, code: '14', amount: '1250' }, 'decided while draining')
  deps.shutdown.started = false
  t.equal((await ready(publicApp)).statusCode, 200, 'ready again')
})

t.test('not ready while overloaded', async t => {
  // a heap limit of 1 byte puts the app under pressure from its first sample on
  const { publicApp } = await buildApp(t, { env: { SHED_HEAP_USED_BYTES: '1' } })
  // the heap is sampled every 250 ms; the bound only ends a wait that would never end
  const until = Date.now() + 10_000
  while (!publicApp.isUnderPressure() && Date.now() < until) await sleep(10)
  const res = await publicApp.inject({ method: 'GET', url: '/health/ready' })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { status: 'unavailable', reasons: ['overloaded'] })
  t.equal((await publicApp.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'still live')
})

t.test('a store whose Redis is gone: 503, fast 05s, and recovery without a restart', async t => {
  const redis = await privateRedis(t)
  const store = new RedisStore(createRedisClient({ url: redis.url }), { prefix: 'extauth-health:' })
  await store.connect()
  t.teardown(async () => { await store.close() })
  const deadlineMs = 1500
  const { publicApp, adminApp, logs } = await buildApp(t, { store, env: { DECISION_DEADLINE_MS: String(deadlineMs) } })
  const a = adminClient(adminApp)

  t.equal((await ready(publicApp)).statusCode, 200, 'ready with Redis up')
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 10_000)
  checkInjected(t, await auth(publicApp, authBody({ urn })), { status: 200, code: '00', amount: '1250' }, 'approved with Redis up')

  await redis.stop()
  let res = await readyBecomes(publicApp, 503)
  t.equal(res.statusCode, 503, 'not ready with Redis gone')
  t.match(res.json(), { status: 'unavailable', reasons: ['store_unreachable'] })
  t.equal((await publicApp.inject({ method: 'GET', url: '/health/live' })).statusCode, 200, 'still live')

  // at once: the store fails the call rather than waiting for Redis, so the answer is the store error's
  // and never the deadline guard's (whatever the time it took on a busy machine)
  for (let i = 0; i < 3; i++) {
    const body = authBody({ urn })
    const r = await auth(publicApp, body)
    checkInjected(t, r, { status: 200, code: '05', amount: '1250' }, `request ${i + 1} with Redis gone`)
    t.match(logs.find(l => l.msg === 'decision' && l.reference === body.transactionReferenceNumber), { code: '05', reason: 'store_error' },
      'answered on the store error, not by the deadline guard')
  }
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.equal(metricValue(metrics, 'extauth_deadline_hits_total'), 0, 'the deadline guard answered none of them')

  await redis.restart()
  res = await readyBecomes(publicApp, 200)
  t.equal(res.statusCode, 200, 'ready again once Redis is back')
  // the private Redis keeps nothing across a restart: the customer is set up again
  checkInjected(t, await auth(publicApp, authBody({ urn })), { status: 200, code: '14', amount: '1250' }, 'decisions reach Redis again')
  await a.customer(urn)
  await a.credit(urn, 5000)
  checkInjected(t, await auth(publicApp, authBody({ urn })), { status: 200, code: '00', amount: '1250' }, 'approved again')
  t.equal(await a.available(urn), '3750')
})

t.test('health asked of the admin listener: a 404 naming the public listener, with or without a key', async t => {
  const { adminApp } = await buildApp(t, { env: { HOST: '127.0.0.1', PORT: '18080' } })
  for (const url of ['/health/live', '/health/ready', '/health', '/health/readiness']) {
    for (const headers of [{}, { authorization: `Bearer ${ADMIN_TOKEN}` }, { authorization: 'Bearer wrong-key' }]) {
      const res = await adminApp.inject({ method: 'GET', url, headers })
      const what = `GET ${url} ${headers.authorization === undefined ? 'without a key' : 'with a key'}`
      t.equal(res.statusCode, 404, `${what}: 404, not 401`)
      t.match(res.json(), { error: 'NOT_FOUND', message: /public listener/ }, what)
      t.match(res.json().message, 'http://127.0.0.1:18080/health/ready', `${what}: names where health is`)
    }
  }
  t.equal((await adminApp.inject({ method: 'HEAD', url: '/health/ready' })).statusCode, 404, 'HEAD too')
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/rules' })).statusCode, 401, 'the admin routes still need a key')
  t.equal((await adminApp.inject({ method: 'GET', url: '/nothing-here' })).statusCode, 401, 'other unknown paths as before')
})
