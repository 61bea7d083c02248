// Certificates for TLS tests, made at test time with the openssl command line into a temporary folder: a CA
// with a server certificate (127.0.0.1, localhost) and a client certificate it signs, and a second CA with
// a client certificate of its own (one the first CA never signed). Removed at the end.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface TestCerts {
  dir: string
  /** file paths */
  caCert: string
  serverCert: string
  serverKey: string
  clientCert: string
  clientKey: string
  otherCaCert: string
  otherClientCert: string
  otherClientKey: string
  read: (path: string) => Buffer
}

export function makeCerts (t: Teardown): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'extauth-certs-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const p = (name: string): string => join(dir, name)
  const openssl = (...args: string[]): void => { execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' }) }
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  const ca = (name: string): void => { openssl('req', '-x509', ...key, '-keyout', p(`${name}.key`), '-out', p(`${name}.crt`), '-days', '2', '-subj', `/CN=${name}`) }
  const signed = (name: string, by: string, cn: string, ext: string): void => {
    writeFileSync(p(`${name}.ext`), ext)
    openssl('req', ...key, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', `/CN=${cn}`)
    openssl('x509', '-req', '-in', p(`${name}.csr`), '-CA', p(`${by}.crt`), '-CAkey', p(`${by}.key`), '-CAcreateserial', '-out', p(`${name}.crt`), '-days', '2', '-extfile', p(`${name}.ext`))
  }
  ca('ca')
  ca('other-ca')
  signed('server', 'ca', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n')
  signed('client', 'ca', 'backoffice', 'extendedKeyUsage=clientAuth\n')
  signed('other-client', 'other-ca', 'backoffice', 'extendedKeyUsage=clientAuth\n')
  return {
    dir,
    caCert: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
    otherCaCert: p('other-ca.crt'),
    otherClientCert: p('other-client.crt'),
    otherClientKey: p('other-client.key'),
    read: (path) => readFileSync(path)
  }
}
