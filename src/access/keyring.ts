// The admin keys in use: ADMIN_TOKEN (every scope) and the keys of ADMIN_KEYS_FILE. A presented key is
// hashed once and compared with every key's hash in constant time, whichever matches, so the time taken
// does not tell how close a guess came nor which key it was.
import { createHash, timingSafeEqual } from 'node:crypto'
import { ADMIN_TOKEN_KEY_ID, AdminKeysError, loadAdminKeys, type AdminKey } from './keys-file.js'
import { SCOPES, type Scope } from './scopes.js'

export interface KeyHolder {
  id: string
  scopes: ReadonlySet<Scope>
}

export type KeysReload = { ok: true, keys: number } | { ok: false, error: string }

export class Keyring {
  private keys: readonly AdminKey[]
  private readonly token: AdminKey | null

  /** `file` '' = no keys file; throws AdminKeysError for a bad file or a key that is also ADMIN_TOKEN */
  constructor (adminToken: string, private readonly file: string) {
    this.token = adminToken === '' ? null : { id: ADMIN_TOKEN_KEY_ID, sha256: sha256(adminToken), scopes: new Set(SCOPES) }
    this.keys = this.withToken(loadAdminKeys(file))
  }

  private withToken (fileKeys: AdminKey[]): AdminKey[] {
    const t = this.token
    if (t !== null && fileKeys.some((k) => timingSafeEqual(k.sha256, t.sha256))) {
      throw new AdminKeysError(this.file, 'a key of the file is ADMIN_TOKEN itself: give it one place')
    }
    return t === null ? fileKeys : [t, ...fileKeys]
  }

  /** how many keys are in use */
  get size (): number {
    return this.keys.length
  }

  /**
   * The key `presented` is, or null. Every key's hash is compared, in constant time each, also for a call
   * without a key ('' is no key's: the keys file refuses its hash, and ADMIN_TOKEN '' is no key).
   */
  find (presented: string): KeyHolder | null {
    return this.findDigest(sha256(presented))
  }

  /** The key whose SHA-256 is `digest`, or null. */
  findDigest (digest: Buffer): KeyHolder | null {
    let found: AdminKey | null = null
    for (const k of this.keys) {
      if (timingSafeEqual(k.sha256, digest) && found === null) found = k
    }
    return found === null ? null : { id: found.id, scopes: found.scopes }
  }

  /**
   * The key of this id, or null. The console's session keeps a key's id and scopes, never the key, and asks
   * again on every request: a key taken out of the file, or a scope taken from it, counts at once.
   */
  findId (id: string): KeyHolder | null {
    const found = this.keys.find((k) => k.id === id)
    return found === undefined ? null : { id: found.id, scopes: found.scopes }
  }

  /**
   * The key a client certificate's SHA-256 fingerprint is mapped to, or null. A fingerprint is public (the certificate is shown in every handshake): a plain
   * comparison is enough.
   */
  findCertificate (fingerprint: string): KeyHolder | null {
    const fp = fingerprint.toUpperCase()
    const found = this.keys.find((k) => k.certFingerprint !== undefined && k.certFingerprint === fp)
    return found === undefined ? null : { id: found.id, scopes: found.scopes }
  }

  /** Reads ADMIN_KEYS_FILE again; a bad file keeps the keys in use (and says why). */
  reload (): KeysReload {
    try {
      this.keys = this.withToken(loadAdminKeys(this.file))
      return { ok: true, keys: this.keys.length }
    } catch (err) {
      if (err instanceof AdminKeysError) return { ok: false, error: err.message }
      throw err
    }
  }
}

export function sha256 (s: string): Buffer {
  return createHash('sha256').update(s).digest()
}
