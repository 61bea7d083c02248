// The consumer key and the admin keys are compared in constant time. Timing is not measured (a shared
// machine cannot tell); the code path is: every check, right, wrong, of another length or missing, compares
// SHA-256 digests of equal length with crypto.timingSafeEqual (constantTimeEqual for the consumer key, the
// keyring against every admin key). And the admin API is not on the public listener at all.
import t, { type TAP } from 'tap'
import Fastify from 'fastify'
import { createHash } from 'node:crypto'
import type * as crypto from 'node:crypto'
import { createRequire, syncBuiltinESMExports } from 'node:module'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { constantTimeEqual, failedHeader } from '../../src/http/caller-checks.js'
import { Keyring } from '../../src/access/keyring.js'
import { adminRoutes } from '../../src/http/admin-routes.js'
import { adminAuth } from '../../src/http/admin-auth.js'
import { MemoryStore } from '../../src/store/memory.js'
import { build } from '../helpers/app.js'
import { ADMIN_TOKEN, BANK_ID, CLIENT_ID, CONSUMER_KEY, adminHeaders, authBody, platformHeaders } from '../helpers/config.js'

t.test('constantTimeEqual: equal, unequal, other lengths, empty, unicode; never throws', async (t) => {
  t.equal(constantTimeEqual(CONSUMER_KEY, CONSUMER_KEY), true)
  t.equal(constantTimeEqual(CONSUMER_KEY, CONSUMER_KEY.slice(0, -1) + 'X'), false, 'same length, last character differs')
  t.equal(constantTimeEqual(CONSUMER_KEY, 'X' + CONSUMER_KEY.slice(1)), false, 'same length, first character differs')
  t.equal(constantTimeEqual(CONSUMER_KEY, CONSUMER_KEY + 'x'), false, 'longer')
  t.equal(constantTimeEqual(CONSUMER_KEY, CONSUMER_KEY.slice(0, 3)), false, 'a prefix')
  t.equal(constantTimeEqual('', CONSUMER_KEY), false, 'empty against the key')
  t.equal(constantTimeEqual('', ''), true, 'empty against empty (callers refuse an empty credential themselves)')
  t.equal(constantTimeEqual('ключ-🔑', 'ключ-🔑'), true, 'unicode')
  t.equal(constantTimeEqual('ключ-🔑', 'ключ-🔒'), false)
  t.doesNotThrow(() => constantTimeEqual('a'.repeat(100_000), 'b'), 'very different lengths do not throw (timingSafeEqual would)')
})

// node:crypto's timingSafeEqual replaced by one that records its calls, for this test only. The modules under
// test import it by name from node:crypto; syncBuiltinESMExports() carries the replacement on the built-in's
// CommonJS object into those ESM bindings (no import mocking: it needs a loader of its own, and the tests run
// through tsx's).
const cjsCrypto = createRequire(import.meta.url)('node:crypto') as typeof crypto
function spyTimingSafeEqual (t: Pick<TAP, 'teardown'>): Array<[number, number]> {
  const calls: Array<[number, number]> = []
  const real = cjsCrypto.timingSafeEqual
  cjsCrypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls.push([a.byteLength, b.byteLength])
    return real(a, b)
  }
  syncBuiltinESMExports()
  t.teardown(() => { cjsCrypto.timingSafeEqual = real; syncBuiltinESMExports() })
  return calls
}

t.test('the consumer key: every outcome goes through one digest comparison', async (t) => {
  const calls = spyTimingSafeEqual(t)
  const want = { consumerKey: CONSUMER_KEY, clientId: CLIENT_ID, bankId: BANK_ID, entityIds: [] }
  const cases: Array<[string, Record<string, string | string[] | undefined>, string | null]> = [
    ['right key', { 'x-consumer-custom-id': CONSUMER_KEY, clientid: CLIENT_ID, bankid: BANK_ID }, null],
    ['wrong key of the same length', { 'x-consumer-custom-id': CONSUMER_KEY.replace(/.$/, '#'), clientid: CLIENT_ID, bankid: BANK_ID }, 'X-Consumer-Custom-ID'],
    ['wrong key of another length', { 'x-consumer-custom-id': 'short', clientid: CLIENT_ID, bankid: BANK_ID }, 'X-Consumer-Custom-ID'],
    ['missing header', { clientid: CLIENT_ID, bankid: BANK_ID }, 'X-Consumer-Custom-ID'],
    ['empty header', { 'x-consumer-custom-id': '', clientid: CLIENT_ID, bankid: BANK_ID }, 'X-Consumer-Custom-ID'],
    ['header twice', { 'x-consumer-custom-id': [CONSUMER_KEY, CONSUMER_KEY], clientid: CLIENT_ID, bankid: BANK_ID }, 'X-Consumer-Custom-ID']
  ]
  for (const [label, headers, failed] of cases) {
    calls.length = 0
    t.equal(failedHeader(headers, want), failed, `${label}: ${failed ?? 'accepted'}`)
    t.same(calls, [[32, 32]], `${label}: one timingSafeEqual over two 32-byte digests`)
  }
})

t.test('admin keys: right, wrong, other length, missing, other scheme: every key\'s digest compared each time', async (t) => {
  const calls = spyTimingSafeEqual(t)
  const dir = mkdtempSync(join(tmpdir(), 'extauth-keys-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'keys.json')
  const other = 'reader-key-0123456789'
  writeFileSync(file, JSON.stringify([{ id: 'reader', sha256: createHash('sha256').update(other).digest('hex'), scopes: ['read'] }]))
  const keys = new Keyring(ADMIN_TOKEN, file)
  const app = Fastify()
  const rules = { current: () => { throw new Error('not used') }, reload: async () => { throw new Error('not used') }, loadedAt: () => null }
  const store = new MemoryStore()
  await app.register(async (scope) => {
    await adminAuth(scope, { keys, store })
    await adminRoutes(scope, { store, rules })
  })
  t.teardown(async () => { await app.close() })
  const cases: Array<[string, string | undefined, number]> = [
    ['ADMIN_TOKEN', `Bearer ${ADMIN_TOKEN}`, 404],
    ['a key of the file', `Bearer ${other}`, 404],
    ['wrong key of the same length', `Bearer ${ADMIN_TOKEN.replace(/^./, '#')}`, 401],
    ['wrong key of another length', 'Bearer x', 401],
    ['missing header', undefined, 401],
    ['empty bearer', 'Bearer ', 401],
    ['other scheme', `Basic ${ADMIN_TOKEN}`, 401]
  ]
  for (const [label, authorization, status] of cases) {
    calls.length = 0
    const res = await app.inject({ method: 'GET', url: '/admin/v1/customers/NOBODY', headers: authorization === undefined ? {} : { authorization } })
    t.equal(res.statusCode, status, `${label}: ${status}`)
    t.same(calls, [[32, 32], [32, 32]], `${label}: one timingSafeEqual of 32-byte digests per key, whichever matched`)
  }
})

t.test('the admin API, the card-lifecycle API and the metrics are not on the public listener', async (t) => {
  const { publicApp, adminApp } = await build(t, { env: { SHED_EVENT_LOOP_DELAY_MS: '0' } })
  const routes: Array<['GET' | 'PUT' | 'POST', string, unknown]> = [
    ['PUT', '/admin/v1/customers/U1', {}],
    ['PUT', '/admin/v1/customers/U1/cards/1234', { status: 'ACTIVE' }],
    ['POST', '/admin/v1/customers/U1/credits', { amount: '100', reference: 'r1' }],
    ['POST', '/admin/v1/customers/U1/debits', { amount: '100', reference: 'r2' }],
    ['GET', '/admin/v1/customers/U1', undefined],
    ['GET', '/admin/v1/customers/U1/decisions/R1', undefined],
    ['POST', '/admin/v1/customers/U1/decisions/R1/reversal', {}],
    ['GET', '/admin/v1/rules', undefined],
    ['POST', '/admin/v1/rules/reload', {}],
    ['GET', '/metrics', undefined],
    ['POST', '/v1/loads', {}],
    ['GET', '/v1/loads/R1', undefined],
    ['POST', '/v1/loads/R1/otp', { otp: '123456' }],
    ['POST', '/v1/loads/R1/otp/resend', {}],
    ['POST', '/v1/preauths/1/capture', {}],
    ['POST', '/v1/preauths/1/cancel', {}],
    ['POST', '/v1/transfers', {}],
    ['GET', '/v1/transfers/T1', undefined],
    ['POST', '/v1/risk/analyse', {}]
  ]
  for (const [method, url, body] of routes) {
    const opts = { method, url, headers: adminHeaders, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) }
    const pub = await publicApp.inject(opts)
    t.match({ status: pub.statusCode, body: pub.json() }, { status: 404, body: { error: 'NOT_FOUND', message: 'no such route' } }, `public ${method} ${url}: no such route, even with the admin token`)
    // and the route does exist on the admin listener (so the 404 above is about the listener)
    const adm = await adminApp.inject(opts)
    t.notMatch(adm.body, /no such route/, `admin ${method} ${url}: routed (${adm.statusCode})`)
  }
  // the decision route is not on the admin listener either
  const res = await adminApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: { ...platformHeaders(), authorization: `Bearer ${ADMIN_TOKEN}` }, payload: JSON.stringify(authBody()) })
  t.equal(res.statusCode, 404, 'POST /api/v1/externalAuth on the admin listener: 404')
})
