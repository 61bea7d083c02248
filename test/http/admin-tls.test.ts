// The admin listener over TLS (ADMIN_TLS_CERT, ADMIN_TLS_KEY) and with client certificates (ADMIN_TLS_CA):
// a client with a certificate the CA signed is served; one without a certificate, or with one of another
// CA, is refused at the handshake, before any key is looked at. Certificates are made with openssl per run.
import t from 'tap'
import { request } from 'node:https'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers/app.js'
import { makeCerts, type TestCerts } from '../helpers/certs.js'
import { ADMIN_TOKEN } from '../helpers/config.js'

interface Outcome { status?: number, body?: string, error?: string }

/** GET /admin/v1/rules over HTTPS, trusting the test CA for the server; never rejects */
async function get (port: number, certs: TestCerts, client: { cert: string, key: string } | null): Promise<Outcome> {
  return await new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/admin/v1/rules',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ca: certs.read(certs.caCert),
      ...(client !== null ? { cert: certs.read(client.cert), key: certs.read(client.key) } : {}),
      agent: false,
      timeout: 10_000
    }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
      res.on('error', (err) => { resolve({ error: err.message }) })
    })
    req.on('error', (err: NodeJS.ErrnoException) => { resolve({ error: err.code ?? err.message }) })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.end()
  })
}

async function listening (t: { teardown: (fn: () => unknown) => void }, env: Record<string, string>): Promise<number> {
  const { adminApp } = await build(t, { env })
  await adminApp.listen({ host: '127.0.0.1', port: 0 })
  return (adminApp.server.address() as AddressInfo).port
}

t.test('with a CA: only a client certificate the CA signed is served', async (t) => {
  const certs = makeCerts(t)
  const port = await listening(t, { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey, ADMIN_TLS_CA: certs.caCert })
  const good = await get(port, certs, { cert: certs.clientCert, key: certs.clientKey })
  t.equal(good.status, 200, `a certificate of the CA: served (${good.error ?? ''})`)
  t.match(good.body, /"version"/)
  const none = await get(port, certs, null)
  t.equal(none.status, undefined, 'no certificate: no answer')
  t.ok(none.error !== undefined, `no certificate: refused (${none.error ?? ''})`)
  const other = await get(port, certs, { cert: certs.otherClientCert, key: certs.otherClientKey })
  t.equal(other.status, undefined, 'a certificate of another CA: no answer')
  t.ok(other.error !== undefined, `a certificate of another CA: refused (${other.error ?? ''})`)
})

t.test('without a CA: HTTPS, no client certificate asked for; the key still is', async (t) => {
  const certs = makeCerts(t)
  const port = await listening(t, { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey })
  const res = await get(port, certs, null)
  t.equal(res.status, 200, `served over TLS (${res.error ?? ''})`)
})
