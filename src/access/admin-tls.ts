// ADMIN_TLS_CERT, ADMIN_TLS_KEY, ADMIN_TLS_CA: the admin listener over HTTPS, and with a CA it asks every
// client for a certificate and refuses one the CA did not sign (for a back end on another host). Read and
// checked once at start-up: a certificate that does not go with its key stops the start, not the first call.
import { readFileSync } from 'node:fs'
import { createSecureContext } from 'node:tls'
import { X509Certificate } from 'node:crypto'

export interface AdminTls {
  cert: Buffer
  key: Buffer
  /** the CA that signs the clients' certificates; set: a client without one it signed is refused */
  ca?: Buffer
}

export class AdminTlsError extends Error {
  constructor (readonly variable: string, message: string) {
    super(message)
    this.name = 'AdminTlsError'
  }
}

function read (variable: string, file: string): Buffer {
  try {
    return readFileSync(file)
  } catch (err) {
    throw new AdminTlsError(variable, `${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** The listener's TLS settings from the three file paths ('' = unset); undefined: plain HTTP. */
export function adminTlsOptions (files: { cert: string, key: string, ca: string }): AdminTls | undefined {
  if (files.cert === '' && files.key === '') {
    if (files.ca !== '') throw new AdminTlsError('ADMIN_TLS_CA', 'needs ADMIN_TLS_CERT and ADMIN_TLS_KEY (client certificates are asked for over TLS only)')
    return undefined
  }
  if (files.cert === '') throw new AdminTlsError('ADMIN_TLS_CERT', 'is required with ADMIN_TLS_KEY')
  if (files.key === '') throw new AdminTlsError('ADMIN_TLS_KEY', 'is required with ADMIN_TLS_CERT')
  const tls: AdminTls = { cert: read('ADMIN_TLS_CERT', files.cert), key: read('ADMIN_TLS_KEY', files.key) }
  if (files.ca !== '') tls.ca = read('ADMIN_TLS_CA', files.ca)
  try {
    createSecureContext({ cert: tls.cert, key: tls.key })
  } catch (err) {
    throw new AdminTlsError('ADMIN_TLS_CERT', `with ADMIN_TLS_KEY is not a usable certificate and key (${(err as Error).message})`)
  }
  if (tls.ca !== undefined) {
    let ca: X509Certificate
    try {
      // the first certificate of the file (a bundle may hold more)
      ca = new X509Certificate(tls.ca)
    } catch (err) {
      throw new AdminTlsError('ADMIN_TLS_CA', `is not a usable CA certificate (${(err as Error).message})`)
    }
    if (!ca.ca) throw new AdminTlsError('ADMIN_TLS_CA', 'is not a usable CA certificate (it is not marked as a CA)')
  }
  return tls
}
