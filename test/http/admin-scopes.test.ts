// Scopes (docs/operations/admin-access.md): every admin route against every scope. A key with the route's
// scope gets past the check (any answer but 401/403), a key with any other scope is refused 403 FORBIDDEN
// naming the scope, and the refusal is audited. The expected table is written here, not read from the
// routes: a new route fails the completeness check until it is added, with its scope, below.
import t from 'tap'
import Fastify from 'fastify'
import { build } from '../helpers/app.js'
import { keysFile, type KeySpec } from '../helpers/admin-keys.js'
import { SCOPES, type Scope } from '../../src/access/scopes.js'
import { adminAuth } from '../../src/http/admin-auth.js'
import { Keyring } from '../../src/access/keyring.js'
import { MemoryStore } from '../../src/store/memory.js'
import { ADMIN_TOKEN } from '../helpers/config.js'

const EXPECTED: Array<[string, string, Scope]> = [
  ['PUT', '/admin/v1/customers/:urn', 'customers:write'],
  ['PUT', '/admin/v1/customers/:urn/cards/:last4', 'customers:write'],
  ['GET', '/admin/v1/customers/:urn', 'read'],
  ['POST', '/admin/v1/customers/:urn/credits', 'money:write'],
  ['POST', '/admin/v1/customers/:urn/debits', 'money:write'],
  ['GET', '/admin/v1/customers/:urn/decisions/:ref', 'read'],
  ['POST', '/admin/v1/customers/:urn/decisions/:ref/reversal', 'money:write'],
  ['GET', '/admin/v1/rules', 'read'],
  ['POST', '/admin/v1/rules/reload', 'rules:reload'],
  ['GET', '/admin/v1/customers/:urn/cards/:last4/controls', 'read'],
  ['PATCH', '/admin/v1/customers/:urn/cards/:last4/controls', 'controls:write'],
  ['POST', '/v1/loads', 'lifecycle'],
  ['GET', '/v1/loads/:ref', 'read'],
  ['POST', '/v1/loads/:ref/otp/resend', 'lifecycle'],
  ['POST', '/v1/loads/:ref/otp', 'lifecycle'],
  ['POST', '/v1/preauths/:pgTransactionId/capture', 'lifecycle'],
  ['POST', '/v1/preauths/:pgTransactionId/cancel', 'lifecycle'],
  ['POST', '/v1/transfers', 'lifecycle'],
  ['GET', '/v1/transfers/:id', 'read'],
  ['POST', '/v1/unloads', 'lifecycle'],
  ['GET', '/v1/unloads/:id', 'read'],
  ['POST', '/v1/risk/analyse', 'lifecycle'],
  ['GET', '/admin/v1/events/failed', 'read'],
  ['POST', '/admin/v1/events/failed/:id/resend', 'events'],
  ['GET', '/admin/v1/decisions/:ref', 'read'],
  ['GET', '/admin/v1/decisions', 'read'],
  ['GET', '/admin/v1/audit', 'read'],
  ['GET', '/admin/v1/standin', 'read'],
  ['POST', '/admin/v1/standin', 'standin'],
  ['POST', '/admin/v1/statements', 'money:write'],
  ['GET', '/admin/v1/statements/:id', 'read'],
  ['GET', '/admin/v1/reconciliation/exceptions', 'read'],
  ['POST', '/admin/v1/reconciliation/exceptions/:id/resolve', 'money:write'],
  // the API reference and the files of its rendered page
  ['GET', '/admin/openapi.json', 'read'],
  ['GET', '/admin/docs', 'read'],
  ['GET', '/admin/docs/json', 'read'],
  ['GET', '/admin/docs/yaml', 'read'],
  ['GET', '/admin/docs/static/*', 'read'],
  ['GET', '/admin/docs/static/index.html', 'read'],
  ['GET', '/admin/docs/static/swagger-initializer.js', 'read'],
  ['GET', '/admin/docs/static/theme/extauth.svg', 'read'],
  ['GET', '/admin/docs/files/*', 'read']
]

/** a URL of the route pattern: every parameter filled with a valid id */
function urlOf (pattern: string): string {
  return pattern.replace(':urn', 'USCOPE1').replace(':last4', '1234').replace(':pgTransactionId', '42').replace(/:[A-Za-z]+/g, 'R1')
}

const keyOf = (scope: Scope): KeySpec => ({ id: `only-${scope.replace(':', '-')}`, key: `key-of-${scope}-0123456789abcdef`, scopes: [scope] })

t.test('every route of the admin listener against every scope', async (t) => {
  const file = keysFile(t, SCOPES.map(keyOf))
  const store = new MemoryStore()
  const { adminApp } = await build(t, { store, env: { ADMIN_KEYS_FILE: file.path } })
  const declared = (adminApp.routeScopes ?? []).filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url} ${r.scope}`).sort()
  t.same(declared, EXPECTED.map(([m, u, s]) => `${m} ${u} ${s}`).sort(), 'the listener has exactly the routes of the table, each with the scope it lists')

  let refused = 0
  for (const [method, pattern, need] of EXPECTED) {
    const url = urlOf(pattern)
    for (const scope of SCOPES) {
      const res = await adminApp.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${keyOf(scope).key}`, 'content-type': 'application/json' }, payload: method === 'GET' ? undefined : '{}' })
      if (scope === need) {
        t.notOk([401, 403].includes(res.statusCode), `${method} ${pattern} with ${scope}: past the check (${res.statusCode})`)
      } else {
        t.match({ status: res.statusCode, body: res.json() }, { status: 403, body: { error: 'FORBIDDEN', scope: need } }, `${method} ${pattern} with ${scope}: 403 naming ${need}`)
        t.match(res.json().message, need, 'the message names the scope too')
        refused++
      }
    }
    const all = await adminApp.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: method === 'GET' ? undefined : '{}' })
    t.notOk([401, 403].includes(all.statusCode), `${method} ${pattern} with ADMIN_TOKEN (every scope): past the check (${all.statusCode})`)
  }
  const records = store.auditRecords().filter((r) => r.outcome === 'refused')
  t.equal(records.length, refused, 'every refusal is audited')
  t.ok(records.every((r) => r.keyId.startsWith('only-') && r.scope !== '' && r.before === null && r.after === null), 'as refused, with the key id and the scope it lacked')
  t.match(records.find((r) => r.route === 'POST /admin/v1/customers/:urn/credits'), { target: { urn: 'USCOPE1' }, requestId: /^[0-9a-f-]{36}$/ }, 'with the route, its target and the request id')
  const metrics = await adminApp.inject({ method: 'GET', url: '/metrics' })
  t.equal(metrics.statusCode, 200, '/metrics needs no key (contract §1)')
})

t.test('an unknown key is 401 and is not audited (nothing to attribute)', async (t) => {
  const store = new MemoryStore()
  const { adminApp } = await build(t, { store })
  const res = await adminApp.inject({ method: 'POST', url: '/admin/v1/customers/U1/credits', headers: { authorization: 'Bearer not-a-key', 'content-type': 'application/json' }, payload: '{"amount":"1","reference":"r"}' })
  t.match({ status: res.statusCode, body: res.json() }, { status: 401, body: { error: 'UNAUTHORIZED' } })
  t.same(store.auditRecords(), [])
})

t.test('a route on the admin listener without a scope stops the build', async (t) => {
  const app = Fastify()
  t.teardown(async () => { await app.close() })
  await t.rejects(async () => {
    await app.register(async (scope) => {
      await adminAuth(scope, { keys: new Keyring(ADMIN_TOKEN, ''), store: new MemoryStore() })
      scope.get('/admin/v1/new-thing', async () => ({}))
    })
  }, /declares no scope/)
})
