// Key layout. Every key of one customer carries the hash tag of the customer's bucket, `{b<n>}`, so that one
// Lua script only ever touches one Redis Cluster slot; the decision stream is per bucket for the same reason.
import type { LimitCheck } from '../rules/types.js'

export const BUCKETS = 1024

/** FNV-1a over UTF-16 code units: stable across processes and versions, cheap. */
export function bucketOf (urn: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < urn.length; i++) {
    h ^= urn.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % BUCKETS
}

/**
 * A caller's value as one part of a key: `:` separates parts, so it (and `%`, the escape itself) is
 * percent-encoded. Then no two (urn, reference) pairs share a key, whatever they contain; values without
 * either character keep the key they always had.
 */
export function part (value: string): string {
  return /[%:]/.test(value) ? value.replace(/%/g, '%25').replace(/:/g, '%3A') : value
}

export class Keys {
  constructor (readonly prefix: string) {}

  private tag (urn: string): string {
    return `${this.prefix}{b${bucketOf(urn)}}`
  }

  customer (urn: string): string { return `${this.tag(urn)}:c:${part(urn)}` }
  cards (urn: string): string { return `${this.tag(urn)}:k:${part(urn)}` }
  decision (urn: string, reference: string): string { return `${this.tag(urn)}:d:${part(urn)}:${part(reference)}` }
  moneyOp (urn: string, kind: 'credit' | 'debit', reference: string): string { return `${this.tag(urn)}:o:${kind}:${part(urn)}:${part(reference)}` }
  stream (urn: string): string { return `${this.tag(urn)}:s` }
  /** the card's own control settings, a hash of `kind|field` */
  cardControls (urn: string, last4: string): string { return `${this.tag(urn)}:cc:${part(urn)}:${part(last4)}` }
  /** the approved total of one card and control kind over one local day (YYYYMMDD) */
  controlDaily (urn: string, last4: string, kind: string, day: string): string { return `${this.tag(urn)}:cd:${part(urn)}:${part(last4)}:${kind}:${day}` }
  lifecycle (kind: string, id: string): string { return `${this.prefix}lc:${kind}:${part(id)}` }
  lifecycleLock (kind: string, id: string): string { return `${this.prefix}lc:${kind}:${part(id)}:lock` }
  /** one sorted set per rule and scope; entries are approved transactions scored by time */
  limit (urn: string, last4: string, limit: Pick<LimitCheck, 'ruleId' | 'per'>): string {
    const scope = limit.per === 'card' ? `${part(urn)}:${part(last4)}` : part(urn)
    return `${this.tag(urn)}:l:${part(limit.ruleId)}:${limit.per}:${scope}`
  }
}

/** A limit-window entry: amount first so a script can sum without a second lookup; reference makes it unique. */
export function limitMember (amount: number, reference: string): string {
  return `${amount}|${reference}`
}
