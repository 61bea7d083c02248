// The prepaid simulator's tokens: JSON sealed with AES-256-GCM (the spec does not say what the platform
// uses; GCM gives both secrecy and a tamper check, which is what a caller can observe).
// Token = base64url(iv[12] || tag[16] || ciphertext).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const IV_BYTES = 12
const TAG_BYTES = 16

/** A 32-byte key from a Buffer, 64 hex characters or base64 of 32 bytes. */
export function tokenKey (key: Buffer | string): Buffer {
  const buf = Buffer.isBuffer(key)
    ? key
    : /^[0-9a-fA-F]{64}$/.test(key) ? Buffer.from(key, 'hex') : Buffer.from(key, 'base64')
  if (buf.length !== 32) throw new Error('prepaid sim key must be 32 bytes (64 hex characters or base64)')
  return buf
}

export function seal (key: Buffer, value: unknown): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')
}

/** The sealed JSON, or undefined when the token is not one of ours or was altered. */
export function open (key: Buffer, token: string): unknown {
  const raw = Buffer.from(token, 'base64url')
  if (raw.length <= IV_BYTES + TAG_BYTES) return undefined
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
