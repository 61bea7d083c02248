// The console under TLS (ADMIN_TLS_*): its session cookie is Secure, HSTS is sent and the policy upgrades
// insecure requests; over plain HTTP none of those (an upgrade would send the forms nowhere).
import t from 'tap'
import { request } from 'node:https'
import type { AddressInfo } from 'node:net'
import { X509Certificate } from 'node:crypto'
import { build, type Built } from '../helpers/app.js'
import { makeCerts, type TestCerts } from '../helpers/certs.js'
import { keysFile, sha256Hex } from '../helpers/admin-keys.js'
import type { IncomingHttpHeaders } from 'node:http'

async function signInPage (port: number, ca: Buffer): Promise<IncomingHttpHeaders> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/admin/console/sign-in', ca, agent: false, timeout: 10_000 }, (res) => {
      res.resume()
      res.on('end', () => { resolve(res.headers) })
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('over HTTPS: a Secure cookie, HSTS, upgrade-insecure-requests', async (t) => {
  const certs = makeCerts(t)
  const { adminApp } = await build(t, { env: { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey } })
  await adminApp.listen({ host: '127.0.0.1', port: 0 })
  const headers = await signInPage((adminApp.server.address() as AddressInfo).port, certs.read(certs.caCert))
  const cookie = [headers['set-cookie'] ?? []].flat().join('\n')
  t.match(cookie, /extauth_console=.*; Secure/i)
  t.match(cookie, /HttpOnly/i)
  t.match(cookie, /SameSite=Strict/i)
  t.match(String(headers['strict-transport-security']), /max-age=\d+/)
  t.match(String(headers['content-security-policy']), 'upgrade-insecure-requests')
})

t.test('over HTTP: none of them', async (t) => {
  const { adminApp } = await build(t)
  const res = await adminApp.inject({ method: 'GET', url: '/admin/console/sign-in' })
  t.notMatch(String(res.headers['set-cookie']), /Secure/)
  t.equal(res.headers['strict-transport-security'], undefined)
  t.notMatch(String(res.headers['content-security-policy']), 'upgrade-insecure-requests')
})

// Sign-in with a client certificate (ADMIN_TLS_CA, certFingerprint in ADMIN_KEYS_FILE): a real TLS connection,
// since the fingerprint is the one the handshake verified.
interface Answer { status: number, headers: IncomingHttpHeaders, body: string }

class TlsBrowser {
  cookie = ''
  csrf = ''
  constructor (readonly port: number, readonly certs: TestCerts, readonly client: { cert: string, key: string }) {}

  async send (method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<Answer> {
    const payload = form === undefined ? undefined : new URLSearchParams(form).toString()
    const a = await new Promise<Answer>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port: this.port,
        method,
        path,
        ca: this.certs.read(this.certs.caCert),
        cert: this.certs.read(this.client.cert),
        key: this.certs.read(this.client.key),
        agent: false,
        timeout: 10_000,
        headers: {
          ...(this.cookie === '' ? {} : { cookie: this.cookie }),
          ...(payload === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(payload) })
        }
      }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => { body += d })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body }) })
      })
      req.on('error', reject)
      req.end(payload)
    })
    for (const c of [a.headers['set-cookie'] ?? []].flat()) this.cookie = c.split(';', 1)[0] as string
    const m = /name="_csrf" value="([^"]+)"/.exec(a.body)
    if (m !== null) this.csrf = m[1] as string
    return a
  }

  async post (path: string, fields: Record<string, string>): Promise<Answer> {
    return await this.send('POST', path, { _csrf: this.csrf, ...fields })
  }
}

const READER = { id: 'support-reader', key: 'reader-key-0123456789abcdef', scopes: ['read'] }
const AGENT = { id: 'support-agent', key: 'agent-key-0123456789abcdef', scopes: ['read', 'money:write'] }

function keysWith (fingerprints: Record<string, string>): string {
  return JSON.stringify([READER, AGENT].map((k) => ({ id: k.id, sha256: sha256Hex(k.key), scopes: k.scopes, ...(fingerprints[k.id] !== undefined ? { certFingerprint: fingerprints[k.id] } : {}) })))
}

async function mtlsConsole (t: { teardown: (fn: () => unknown) => void }, fingerprints: Record<string, string>): Promise<{ port: number, certs: TestCerts, built: Built, file: ReturnType<typeof keysFile> }> {
  const certs = makeCerts(t)
  const file = keysFile(t, [])
  file.write(keysWith(fingerprints))
  const built = await build(t, { env: { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey, ADMIN_TLS_CA: certs.caCert, ADMIN_KEYS_FILE: file.path } })
  await built.adminApp.listen({ host: '127.0.0.1', port: 0 })
  return { port: (built.adminApp.server.address() as AddressInfo).port, certs, built, file }
}

const fingerprintOf = (certs: TestCerts, path: string): string => new X509Certificate(certs.read(path)).fingerprint256

t.test('mTLS: a certificate mapped to a key signs in as that key, with its scopes', async (t) => {
  const { port, certs, built, file } = await mtlsConsole(t, {})
  // the mapping is written in lower case: read case-insensitively
  file.write(keysWith({ 'support-reader': fingerprintOf(certs, certs.clientCert).toLowerCase() }))
  t.ok(built.deps.config.adminKeys.reload().ok)
  const b = new TlsBrowser(port, certs, { cert: certs.clientCert, key: certs.clientKey })
  const signIn = await b.send('GET', '/admin/console/sign-in')
  t.equal(signIn.status, 200)
  t.match(signIn.body, 'Sign in with your certificate')
  t.match(signIn.body, 'support-reader')
  t.match(signIn.body, 'name="key"', 'the key form stays')
  const forged = await b.send('POST', '/admin/console/sign-in/certificate', { next: '/admin/console/decisions' })
  t.equal(forged.status, 403, 'without the form token: refused')
  const done = await b.post('/admin/console/sign-in/certificate', { next: '/admin/console/decisions' })
  t.equal(done.status, 303)
  t.equal(done.headers.location, '/admin/console/decisions')
  const decisions = await b.send('GET', '/admin/console/decisions')
  t.equal(decisions.status, 200)
  t.match(decisions.body, 'support-reader', 'the page names the key')
  t.equal((await b.post('/admin/console/customers/U1/credit', { amount: '1.00', reason: 'test' })).status, 403, 'a read key acts on nothing')
  t.notMatch(built.rawLogs.join('\n'), /BEGIN CERTIFICATE/, 'no certificate in the log')
  // SIGHUP takes the mapping away: the session ends on the next request
  file.write(keysWith({}))
  t.ok(built.deps.config.adminKeys.reload().ok)
  t.equal((await b.send('GET', '/admin/console/decisions')).status, 303, 'sent to sign in')
})

t.test('mTLS: a certificate mapped to the agent key sees the agent\'s actions', async (t) => {
  const { port, certs, file, built } = await mtlsConsole(t, {})
  file.write(keysWith({ 'support-agent': fingerprintOf(certs, certs.clientCert) }))
  t.ok(built.deps.config.adminKeys.reload().ok)
  const b = new TlsBrowser(port, certs, { cert: certs.clientCert, key: certs.clientKey })
  await b.send('GET', '/admin/console/sign-in')
  t.equal((await b.post('/admin/console/sign-in/certificate', {})).status, 303)
  const page = await b.send('GET', '/admin/console/decisions')
  t.equal(page.status, 200)
  t.match(page.body, 'support-agent')
  // the key itself taken out: the session ends too
  file.write(JSON.stringify([{ id: READER.id, sha256: sha256Hex(READER.key), scopes: READER.scopes }]))
  t.ok(built.deps.config.adminKeys.reload().ok)
  t.equal((await b.send('GET', '/admin/console/decisions')).status, 303, 'sent to sign in')
})

t.test('mTLS: a certificate mapped to no key is offered the key form only', async (t) => {
  const { port, certs } = await mtlsConsole(t, { 'support-reader': '00:'.repeat(31) + '00' })
  const b = new TlsBrowser(port, certs, { cert: certs.clientCert, key: certs.clientKey })
  const signIn = await b.send('GET', '/admin/console/sign-in')
  t.equal(signIn.status, 200)
  t.notMatch(signIn.body, 'Sign in with your certificate')
  t.match(signIn.body, 'not mapped to a key')
  t.match(signIn.body, 'name="key"')
  const tried = await b.post('/admin/console/sign-in/certificate', {})
  t.equal(tried.status, 401, 'posting the form anyway signs nothing in')
  t.equal((await b.send('GET', '/admin/console/decisions')).status, 303)
  // the key form still works
  await b.send('GET', '/admin/console/sign-in')
  t.equal((await b.post('/admin/console/sign-in', { key: READER.key })).status, 303)
  t.equal((await b.send('GET', '/admin/console/decisions')).status, 200)
})

t.test('a malformed certFingerprint in the keys file stops the start, naming the entry', async (t) => {
  const file = keysFile(t, [])
  file.write(JSON.stringify([{ id: 'ops', sha256: sha256Hex(READER.key), scopes: ['read'], certFingerprint: 'AB:CD' }]))
  await t.rejects(build(t, { env: { ADMIN_KEYS_FILE: file.path } }), /entry 0 \(ops\): certFingerprint must be/)
  file.write(JSON.stringify([
    { id: 'a', sha256: sha256Hex('a-key-0123456789'), scopes: ['read'], certFingerprint: 'AB:'.repeat(31) + 'AB' },
    { id: 'b', sha256: sha256Hex('b-key-0123456789'), scopes: ['read'], certFingerprint: 'ab:'.repeat(31) + 'ab' }
  ]))
  await t.rejects(build(t, { env: { ADMIN_KEYS_FILE: file.path } }), /entry 1 \(b\): the same certFingerprint/)
})
