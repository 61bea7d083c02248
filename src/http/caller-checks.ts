// Who may call the public listener: the source-IP allowlist and the platform's headers (spec
// "Authentication" 9; README "Configuration").
import { hash, timingSafeEqual } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import type { CidrList } from '../config.js'

// crypto.hash, one call: a Hash object per request (createHash, update, digest) costs about twice as much
const digest = (s: string): Buffer => hash('sha256', s, 'buffer')

// The expected side is a configured credential (the consumer key, the admin token), the same on every
// request: its digest is kept rather than recomputed per request. Bounded, for credentials that change.
const expectedDigests = new Map<string, Buffer>()
const expectedDigestsMax = 4

function expectedDigest (s: string): Buffer {
  let d = expectedDigests.get(s)
  if (d === undefined) {
    if (expectedDigests.size >= expectedDigestsMax) expectedDigests.clear()
    expectedDigests.set(s, d = digest(s))
  }
  return d
}

/**
 * Equal-length digests make the comparison's time independent of where the strings differ. `expected` is
 * the configured credential (its digest is kept), `given` what the caller sent.
 */
export function constantTimeEqual (given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), expectedDigest(expected))
}

export function ipAllowed (ip: string, allowed: CidrList): boolean {
  if (allowed.length === 0) return true
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  try {
    // process() turns an IPv4-mapped IPv6 address (::ffff:10.0.0.1) into the IPv4 it carries
    addr = ipaddr.process(ip)
  } catch {
    return false
  }
  for (const range of allowed) {
    if (addr.kind() === range[0].kind() && addr.match(range as [ipaddr.IPv4, number] & [ipaddr.IPv6, number])) return true
  }
  return false
}

export interface HeaderExpectations {
  consumerKey: string
  clientId: string
  bankId: string
  entityIds: readonly string[]
}

type Headers = Record<string, string | string[] | undefined>

function one (h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? undefined : h
}

/** Returns the name of the first header that fails, or null when all pass. */
export function failedHeader (headers: Headers, want: HeaderExpectations): string | null {
  const key = one(headers['x-consumer-custom-id'])
  // compared in full even when absent, so a missing header takes the same path as a wrong one
  if (!constantTimeEqual(key ?? '', want.consumerKey) || key === undefined) return 'X-Consumer-Custom-ID'
  if (one(headers.clientid) !== want.clientId) return 'clientId'
  if (one(headers.bankid) !== want.bankId) return 'bankId'
  const entity = one(headers.entityid)
  if (headers.entityid !== undefined && (entity === undefined || (want.entityIds.length > 0 && !want.entityIds.includes(entity)))) return 'entityId'
  return null
}
