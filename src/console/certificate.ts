// Sign-in with a client certificate (an mTLS admin listener, ADMIN_TLS_CA): the handshake has already checked
// the certificate against the CA; its SHA-256 fingerprint, mapped to a key in ADMIN_KEYS_FILE, names the key.
// Nothing of the certificate but its fingerprint is read, kept or logged.
import type { TLSSocket } from 'node:tls'
import type { FastifyRequest } from 'fastify'
import type { Keyring, KeyHolder } from '../access/keyring.js'

/** The verified client certificate's SHA-256 fingerprint of this request's connection, or null. */
export function peerFingerprint (request: FastifyRequest): string | null {
  const socket = request.raw.socket as Partial<TLSSocket>
  if (socket.encrypted !== true || socket.authorized !== true || typeof socket.getPeerCertificate !== 'function') return null
  const fp = socket.getPeerCertificate().fingerprint256
  return typeof fp === 'string' && fp !== '' ? fp.toUpperCase() : null
}

export interface CertificateKey extends KeyHolder {
  fingerprint: string
}

/** The key this request's client certificate is mapped to, or null (no mTLS, no certificate, no mapping). */
export function certificateKey (request: FastifyRequest, keys: Keyring, clientCerts: boolean): CertificateKey | null {
  if (!clientCerts) return null
  const fingerprint = peerFingerprint(request)
  if (fingerprint === null) return null
  const found = keys.findCertificate(fingerprint)
  return found === null ? null : { id: found.id, scopes: found.scopes, fingerprint }
}
