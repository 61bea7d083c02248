// The public listener over real HTTP on 127.0.0.1 (README "The decision"): decisions, refusals and bad bodies as
// the platform's client sees them, the deadline, the source address behind a proxy, and what the public
// listener does not serve.
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { request } from 'undici'
import type { FastifyInstance } from 'fastify'
import { adminHeaders, testConfig, answerDueMs } from '../helpers/config.js'
import { ConfigError } from '../../src/config.js'
import {
  AUTH_PATH, adminClient, authBody, buildApp, checkAnswer, freshUrn, hangingStore, metricValue, platformHeaders
} from '../helpers/http-checks.js'

interface Reply { status: number, contentType: unknown, text: string }

async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

async function post (base: string, body: unknown, headers: Record<string, string> = platformHeaders()): Promise<Reply> {
  const res = await request(`${base}${AUTH_PATH}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body)
  })
  return { status: res.statusCode, contentType: res.headers['content-type'], text: await res.body.text() }
}

t.test('decisions, refusals and bad bodies over HTTP', async t => {
  const { publicApp, adminApp } = await buildApp(t)
  const base = await listen(publicApp)
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 10_000)

  let r = await post(base, authBody({ urn }))
  checkAnswer(t, r.status, r.contentType, r.text, { status: 200, code: '00', amount: '1250' }, 'approved')
  t.equal(await a.available(urn), '8750', 'the debit is held')

  r = await post(base, authBody({ urn }), platformHeaders({ 'x-consumer-custom-id': 'wrong' }))
  checkAnswer(t, r.status, r.contentType, r.text, { status: 401, code: '05' }, 'wrong consumer key')
  r = await post(base, authBody({ urn }), platformHeaders({ bankid: undefined }))
  checkAnswer(t, r.status, r.contentType, r.text, { status: 401, code: '05' }, 'bankId missing')

  r = await post(base, '{"urn": "x", ')
  checkAnswer(t, r.status, r.contentType, r.text, { status: 400, code: '05' }, 'malformed JSON')
  r = await post(base, authBody({ urn, last4Digits: '123' }))
  checkAnswer(t, r.status, r.contentType, r.text, { status: 400, code: '05', amount: '1250' }, 'malformed field')

  const oversize = JSON.stringify({ ...authBody({ urn }), pad: 'x'.repeat(17 * 1024) })
  r = await post(base, oversize)
  checkAnswer(t, r.status, r.contentType, r.text, { status: 400, code: '05' }, 'body over 16 KiB')
  const huge = JSON.stringify({ ...authBody({ urn }), pad: 'x'.repeat(512 * 1024) })
  r = await post(base, huge)
  checkAnswer(t, r.status, r.contentType, r.text, { status: 400, code: '05' }, 'body of 512 KiB')
  t.equal(await a.available(urn), '8750', 'refused requests held nothing')

  // the listener still answers after refusing large bodies
  r = await post(base, authBody({ urn }))
  checkAnswer(t, r.status, r.contentType, r.text, { status: 200, code: '00', amount: '1250' }, 'approved after the refusals')
})

t.test('the deadline over HTTP', async t => {
  const deadlineMs = 300
  const { publicApp, adminApp } = await buildApp(t, { store: hangingStore(), env: { DECISION_DEADLINE_MS: String(deadlineMs) } })
  const base = await listen(publicApp)
  const t0 = performance.now()
  const r = await post(base, authBody())
  const elapsed = performance.now() - t0
  checkAnswer(t, r.status, r.contentType, r.text, { status: 200, code: '05', amount: '1250' })
  t.ok(elapsed <= answerDueMs(deadlineMs), `answered by ${answerDueMs(deadlineMs)} ms, on the configured deadline (${Math.round(elapsed)} ms)`)
  t.ok(elapsed >= deadlineMs - 20, `not before the deadline (${Math.round(elapsed)} ms)`)
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.equal(metricValue(metrics, 'extauth_deadline_hits_total'), 1, 'answered by the deadline guard')
})

t.test('TRUST_PROXY=true with ALLOWED_SOURCE_IPS is refused at start-up, naming both', async t => {
  // true takes the left-most X-Forwarded-For entry, which the caller writes (a balancer appends to it):
  // any caller could name an allowed address
  let err: ConfigError | undefined
  try {
    testConfig({ TRUST_PROXY: 'true', ALLOWED_SOURCE_IPS: '10.1.0.0/16' })
  } catch (e) {
    if (e instanceof ConfigError) err = e
  }
  t.equal(err?.variable, 'TRUST_PROXY')
  t.match(err?.message, /ALLOWED_SOURCE_IPS/, 'the message names the other variable')
  t.equal(testConfig({ TRUST_PROXY: 'true' }).trustProxy, true, 'true without ALLOWED_SOURCE_IPS is accepted (the source address is then only logged)')
})

t.test('TRUST_PROXY as a hop count: the address the nearest proxies added counts', async t => {
  const cases: Array<[string, string, string | undefined, number, string]> = [
    ['1', 'the address the proxy added, allowed', '10.1.2.3', 200, '14'],
    ['1', 'the address the proxy added, refused', '10.2.0.1', 403, '05'],
    ['1', 'a forged allowed entry before the one the proxy added does not help', '10.1.2.3, 10.2.0.1', 403, '05'],
    ['1', 'a forged refused entry does not hurt', '10.2.0.1, 10.1.2.3', 200, '14'],
    ['1', 'no X-Forwarded-For: the peer 127.0.0.1, refused', undefined, 403, '05'],
    ['2', 'two proxies: the address the outer one added, allowed', '10.2.0.1, 10.1.2.3, 10.9.0.5', 200, '14'],
    ['2', 'two proxies: a forged allowed entry does not help', '10.1.2.3, 10.2.0.1, 10.9.0.5', 403, '05']
  ]
  for (const hops of ['1', '2']) {
    const { publicApp } = await buildApp(t, { env: { TRUST_PROXY: hops, ALLOWED_SOURCE_IPS: '10.1.0.0/16' } })
    const base = await listen(publicApp)
    for (const [n, label, xff, status, code] of cases) {
      if (n !== hops) continue
      const r = await post(base, authBody(), platformHeaders({ 'x-forwarded-for': xff }))
      checkAnswer(t, r.status, r.contentType, r.text, { status, code }, `TRUST_PROXY=${hops}: ${label}`)
    }
  }
  for (const bad of ['-1', '1.5', '17']) {
    let variable = ''
    try {
      testConfig({ TRUST_PROXY: bad })
    } catch (err) {
      if (err instanceof ConfigError) variable = err.variable
    }
    t.equal(variable, 'TRUST_PROXY', `TRUST_PROXY=${bad} refused`)
  }
  t.equal(testConfig({ TRUST_PROXY: '0' }).trustProxy, false, '0 hops: no proxy trusted')
})

t.test('TRUST_PROXY as a list of proxy addresses: the first address not listed counts', async t => {
  const { publicApp } = await buildApp(t, { env: { TRUST_PROXY: '127.0.0.1,10.9.0.0/16', ALLOWED_SOURCE_IPS: '10.1.0.0/16' } })
  const base = await listen(publicApp)
  const cases: Array<[string, string, number, string]> = [
    ['client behind the trusted proxy, allowed', '10.1.2.3', 200, '14'],
    ['client behind two trusted proxies, allowed', '10.1.2.3, 10.9.0.5', 200, '14'],
    ['client behind the trusted proxy, refused', '10.2.0.1', 403, '05'],
    ['a forged allowed entry before the real client does not help', '10.1.2.3, 10.2.0.1', 403, '05']
  ]
  for (const [label, xff, status, code] of cases) {
    const r = await post(base, authBody(), platformHeaders({ 'x-forwarded-for': xff }))
    checkAnswer(t, r.status, r.contentType, r.text, { status, code }, label)
  }
})

t.test('without TRUST_PROXY, X-Forwarded-For is ignored', async t => {
  await t.test('127.0.0.1 not allowed: a forwarded allowed address does not help', async t => {
    const { publicApp } = await buildApp(t, { env: { ALLOWED_SOURCE_IPS: '10.1.0.0/16' } })
    const base = await listen(publicApp)
    const r = await post(base, authBody(), platformHeaders({ 'x-forwarded-for': '10.1.2.3' }))
    checkAnswer(t, r.status, r.contentType, r.text, { status: 403, code: '05' })
  })
  await t.test('127.0.0.1 allowed: a forwarded refused address does not hurt', async t => {
    const { publicApp } = await buildApp(t, { env: { ALLOWED_SOURCE_IPS: '127.0.0.1' } })
    const base = await listen(publicApp)
    const r = await post(base, authBody(), platformHeaders({ 'x-forwarded-for': '10.2.0.1' }))
    checkAnswer(t, r.status, r.contentType, r.text, { status: 200, code: '14' })
  })
})

t.test('what the public listener does not serve', async t => {
  const { publicApp } = await buildApp(t)
  const base = await listen(publicApp)
  const get = async (path: string, method: 'GET' | 'POST' | 'PUT' = 'GET'): Promise<{ status: number, contentType: unknown, body: unknown }> => {
    const res = await request(`${base}${path}`, { method, headers: adminHeaders, ...(method !== 'GET' ? { body: '{}' } : {}) })
    const text = await res.body.text()
    let body: unknown = text
    try { body = JSON.parse(text) } catch {}
    return { status: res.statusCode, contentType: res.headers['content-type'], body }
  }
  for (const [path, method] of [
    ['/nope', 'GET'],
    ['/api/v1/externalAuthX', 'POST'],
    ['/api/v2/externalAuth', 'POST'],
    ['/admin/v1/customers/x', 'GET'],
    ['/admin/v1/customers/x', 'PUT'],
    ['/admin/v1/rules', 'GET'],
    ['/admin/v1/rules/reload', 'POST'],
    ['/metrics', 'GET'],
    ['/v1/loads', 'POST']
  ] as Array<[string, 'GET' | 'POST' | 'PUT']>) {
    const r = await get(path, method)
    t.equal(r.status, 404, `${method} ${path}: 404`)
    t.match(String(r.contentType), /^application\/json/, `${method} ${path}: JSON`)
    t.match(r.body, { error: 'NOT_FOUND', message: String }, `${method} ${path}: {error, message}`)
  }
  const live = await get('/health/live')
  t.equal(live.status, 200, '/health/live is served')
  t.match(live.body, { status: 'ok' })
})
