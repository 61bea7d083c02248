// The console's sign-in and session: a known admin key signs in, an unknown one does not; the session cookie
// is HttpOnly and SameSite=Strict and names no key; it ends on sign-out and after CONSOLE_IDLE_TIMEOUT_MS
// without a request; the security headers forbid inline script; a key taken out of the keys file ends
// the sessions signed in with it; sign-ins (refused ones too) and sign-outs are audited.
import t from 'tap'
import { build } from '../helpers/app.js'
import { keysFile, sha256Hex } from '../helpers/admin-keys.js'
import { auditTrailFor } from '../../src/access/audit-trail.js'
import { UNKNOWN_KEY_ID } from '../../src/console/plugin.js'
import { ADMIN_TOKEN } from '../helpers/config.js'
import { CONSOLE, ConsoleClient } from './client.js'

t.test('sign in with a key, read a page, sign out', async (t) => {
  const { adminApp, rawLogs } = await build(t)
  const c = new ConsoleClient(adminApp)
  const first = await c.get(`${CONSOLE}/decisions`)
  t.equal(first.statusCode, 303, 'not signed in: sent to sign in')
  t.match(first.headers.location, `${CONSOLE}/sign-in?next=`)

  const wrong = await c.signIn('not-a-key')
  t.equal(wrong.statusCode, 401)
  t.match(wrong.body, 'That key is not known')

  const ok = await c.signIn(ADMIN_TOKEN)
  t.equal(ok.statusCode, 303)
  const cookie = [ok.headers['set-cookie'] ?? []].flat().join('\n')
  t.match(cookie, /HttpOnly/i)
  t.match(cookie, /SameSite=Strict/i)
  t.match(cookie, /Path=\/admin\/console/)
  t.notMatch(cookie, /Secure/, 'plain HTTP: not Secure')
  t.notOk(cookie.includes(ADMIN_TOKEN), 'the cookie does not carry the key')

  const page = await c.follow(ok)
  t.equal(page.statusCode, 200)
  t.match(page.body, 'Signed in with key')
  t.match(page.body, 'ADMIN_TOKEN')
  const csp = String(page.headers['content-security-policy'])
  t.match(csp, "script-src 'self'")
  t.notMatch(csp, 'unsafe-inline')
  t.match(csp, "frame-ancestors 'none'")
  t.equal(page.headers['x-frame-options'], 'SAMEORIGIN')
  t.equal(page.headers['cache-control'], 'no-store')
  t.notOk(/<script/i.test(page.body), 'no script on the page')

  const out = await c.post(`${CONSOLE}/sign-out`, {})
  t.equal(out.statusCode, 303)
  t.match(out.headers.location, `${CONSOLE}/sign-in?out=1`)
  const after = await c.get(`${CONSOLE}/decisions`)
  t.equal(after.statusCode, 303, 'signed out: sent to sign in again')
  t.notOk(rawLogs.some((l) => l.includes(ADMIN_TOKEN)), 'the key is in no log line')
})

t.test('the session ends after CONSOLE_IDLE_TIMEOUT_MS without a request', async (t) => {
  let now = Date.parse('2026-11-21T09:00:00Z')
  const { adminApp } = await build(t, { env: { CONSOLE_IDLE_TIMEOUT_MS: '60000' }, clock: () => now })
  const c = new ConsoleClient(adminApp)
  await c.signIn(ADMIN_TOKEN)
  now += 50_000
  t.equal((await c.get(`${CONSOLE}/decisions`)).statusCode, 200, 'used within the timeout')
  now += 50_000
  t.equal((await c.get(`${CONSOLE}/decisions`)).statusCode, 200, 'each request starts the timeout again')
  now += 60_000
  const ended = await c.get(`${CONSOLE}/decisions`)
  t.equal(ended.statusCode, 303)
  t.match(ended.headers.location, 'ended=1')
  t.match((await c.follow(ended)).body, 'Your session has ended')
})

t.test('a key taken out of the keys file ends its sessions at once', async (t) => {
  const file = keysFile(t, [{ id: 'support-1', key: 'support-key-0123456789', scopes: ['read'] }])
  const { adminApp, deps } = await build(t, { env: { ADMIN_KEYS_FILE: file.path } })
  const c = new ConsoleClient(adminApp)
  await c.signIn('support-key-0123456789')
  t.equal((await c.get(`${CONSOLE}/decisions`)).statusCode, 200)
  file.write([{ id: 'support-2', key: 'another-key-0123456789', scopes: ['read'] }])
  t.ok(deps.config.adminKeys.reload().ok)
  t.equal((await c.get(`${CONSOLE}/decisions`)).statusCode, 303, 'sent to sign in')
})

t.test('sign-in needs the form token, and goes back only to a console page', async (t) => {
  const { adminApp } = await build(t)
  const c = new ConsoleClient(adminApp)
  await c.get(`${CONSOLE}/sign-in`)
  const forged = await c.post(`${CONSOLE}/sign-in`, { key: ADMIN_TOKEN }, { csrf: false })
  t.equal(forged.statusCode, 403)
  const away = await c.post(`${CONSOLE}/sign-in`, { key: ADMIN_TOKEN, next: '//evil.example/x' })
  t.equal(away.headers.location, `${CONSOLE}/decisions`)
})

t.test('the console is on the admin listener only, and not in the API document', async (t) => {
  const { adminApp, publicApp } = await build(t)
  t.equal((await publicApp.inject({ method: 'GET', url: `${CONSOLE}/sign-in` })).statusCode, 404, 'nothing on the public listener')
  const doc = (await adminApp.inject({ method: 'GET', url: '/admin/openapi.json', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json<{ paths: Record<string, unknown> }>()
  t.same(Object.keys(doc.paths).filter((p) => p.startsWith(CONSOLE)), [])
  t.equal((await adminApp.inject({ method: 'GET', url: `${CONSOLE}/sign-in` })).statusCode, 200)
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/customers/U1', headers: { cookie: 'extauth_console=whatever' } })).statusCode, 401, 'a console cookie is no key for the API')
})

t.test('an upload from someone not signed in is refused before its body is read', async (t) => {
  const { adminApp } = await build(t)
  let parsed = false
  adminApp.addHook('preValidation', async () => { parsed = true })
  const res = await adminApp.inject({
    method: 'POST',
    url: `${CONSOLE}/backtest`,
    headers: { 'content-type': 'multipart/form-data; boundary=B' },
    payload: ['--B', 'Content-Disposition: form-data; name="file"; filename="r.json"', '', 'x'.repeat(1024 * 1024), '--B--', ''].join('\r\n')
  })
  t.equal(res.statusCode, 401)
  t.notOk(parsed, 'refused before the body was parsed')
})

t.test('sign-ins, refused sign-ins and sign-outs are in the audit trail, with the key id and nothing of a key', async (t) => {
  const { adminApp, deps } = await build(t)
  const c = new ConsoleClient(adminApp)
  const typed = 'typed-wrong-key-0123456789'
  t.equal((await c.signIn(typed)).statusCode, 401)
  t.equal((await c.signIn(ADMIN_TOKEN)).statusCode, 303)
  t.equal((await c.post(`${CONSOLE}/sign-out`, {})).statusCode, 303)
  const trail = auditTrailFor(deps.store)
  const items = (await trail?.search({ limit: 20 }))?.items ?? []
  t.same(items.map((r) => [r.route, r.keyId, r.outcome, r.target]).reverse(), [
    ['POST /admin/console/sign-in', UNKNOWN_KEY_ID, 'refused', { via: 'key' }],
    ['POST /admin/console/sign-in', 'ADMIN_TOKEN', 'done', { via: 'key' }],
    ['POST /admin/console/sign-out', 'ADMIN_TOKEN', 'done', {}]
  ])
  const all = JSON.stringify(items)
  for (const secret of [typed, ADMIN_TOKEN, sha256Hex(typed), sha256Hex(ADMIN_TOKEN)]) t.notOk(all.includes(secret), 'no key nor its hash in the trail')
})
