// ADMIN_KEYS_FILE: the admin keys, each stored as the SHA-256 of the key (never the key), with its id and
// scopes. Read at start-up (a bad file stops the start) and again on SIGHUP (a bad file keeps the keys in use).
import { readFileSync } from 'node:fs'
import { SCOPES, isScope, type Scope } from './scopes.js'

export interface AdminKey {
  /** what logs and the audit name the key by */
  id: string
  /** SHA-256 of the key, 32 bytes */
  sha256: Buffer
  scopes: ReadonlySet<Scope>
  /**
   * SHA-256 fingerprint of a client certificate that signs in to the console as this key (on an mTLS admin
   * listener), upper-case colon-separated hex as Node's getPeerCertificate().fingerprint256 gives it
   */
  certFingerprint?: string
}

/** The id ADMIN_TOKEN is known by: one key with every scope. */
export const ADMIN_TOKEN_KEY_ID = 'ADMIN_TOKEN'

export class AdminKeysError extends Error {
  constructor (readonly file: string, reason: string) {
    super(`${file}: ${reason}`)
    this.name = 'AdminKeysError'
  }
}

const ID = /^[A-Za-z0-9._-]{1,64}$/
/** a call without a key presents the empty one: no key may be it */
const EMPTY_KEY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
/** 32 bytes as two hex digits each, colon-separated (openssl x509 -fingerprint -sha256 prints it so) */
const FINGERPRINT = /^[0-9A-F]{2}(?::[0-9A-F]{2}){31}$/i

/** The keys a file's text holds; throws an AdminKeysError naming the entry and what is wrong with it. */
export function parseAdminKeys (text: string, file: string): AdminKey[] {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new AdminKeysError(file, `is not JSON (${(err as Error).message})`)
  }
  if (!Array.isArray(doc) || doc.length === 0) throw new AdminKeysError(file, 'must be a JSON array of at least one {"id", "sha256", "scopes"}')
  const ids = new Set<string>()
  const hashes = new Set<string>()
  const fingerprints = new Set<string>()
  return doc.map((entry: unknown, i) => {
    const at = `entry ${i}`
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new AdminKeysError(file, `${at}: must be an object {"id", "sha256", "scopes"}`)
    const e = entry as Record<string, unknown>
    const extra = Object.keys(e).filter((k) => !['id', 'sha256', 'scopes', 'certFingerprint'].includes(k))
    if (extra.length > 0) throw new AdminKeysError(file, `${at}: unknown field ${extra.join(', ')} (a key is given by its sha256 only)`)
    if (typeof e.id !== 'string' || !ID.test(e.id)) throw new AdminKeysError(file, `${at}: id must be 1-64 letters, digits, . _ -`)
    const name = `${at} (${e.id})`
    if (e.id === ADMIN_TOKEN_KEY_ID) throw new AdminKeysError(file, `${name}: the id ${ADMIN_TOKEN_KEY_ID} is the one of ADMIN_TOKEN`)
    if (ids.has(e.id)) throw new AdminKeysError(file, `${name}: duplicate id`)
    if (typeof e.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(e.sha256)) throw new AdminKeysError(file, `${name}: sha256 must be 64 hex digits (sha256sum of the key)`)
    const hex = e.sha256.toLowerCase()
    if (hex === EMPTY_KEY_SHA256) throw new AdminKeysError(file, `${name}: sha256 is the one of an empty key`)
    if (hashes.has(hex)) throw new AdminKeysError(file, `${name}: the same key (sha256) as an earlier entry`)
    if (!Array.isArray(e.scopes) || e.scopes.length === 0) throw new AdminKeysError(file, `${name}: scopes must be a non-empty array of ${SCOPES.join(', ')}`)
    const unknown = e.scopes.filter((s) => !isScope(s))
    if (unknown.length > 0) throw new AdminKeysError(file, `${name}: unknown scope ${unknown.map(String).join(', ')}; known: ${SCOPES.join(', ')}`)
    let fingerprint: string | undefined
    if (e.certFingerprint !== undefined) {
      if (typeof e.certFingerprint !== 'string' || !FINGERPRINT.test(e.certFingerprint)) throw new AdminKeysError(file, `${name}: certFingerprint must be a certificate's SHA-256 fingerprint, 32 hex pairs joined by colons (openssl x509 -noout -fingerprint -sha256)`)
      fingerprint = e.certFingerprint.toUpperCase()
      if (fingerprints.has(fingerprint)) throw new AdminKeysError(file, `${name}: the same certFingerprint as an earlier entry (a certificate signs in as one key)`)
      fingerprints.add(fingerprint)
    }
    ids.add(e.id)
    hashes.add(hex)
    return { id: e.id, sha256: Buffer.from(hex, 'hex'), scopes: new Set(e.scopes as Scope[]), ...(fingerprint !== undefined ? { certFingerprint: fingerprint } : {}) }
  })
}

/** The keys of ADMIN_KEYS_FILE ('' = none). */
export function loadAdminKeys (file: string): AdminKey[] {
  if (file === '') return []
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new AdminKeysError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  return parseAdminKeys(text, file)
}
