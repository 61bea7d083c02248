// The console under TLS (ADMIN_TLS_*): its session cookie is Secure, HSTS is sent and the policy upgrades
// insecure requests; over plain HTTP none of those (an upgrade would send the forms nowhere).
import t from 'tap'
import { request } from 'node:https'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers/app.js'
import { makeCerts } from '../helpers/certs.js'
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
