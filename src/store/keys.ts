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

export class Keys {
  constructor (readonly prefix: string) {}

  private tag (urn: string): string {
    return `${this.prefix}{b${bucketOf(urn)}}`
  }

  customer (urn: string): string { return `${this.tag(urn)}:c:${urn}` }
  cards (urn: string): string { return `${this.tag(urn)}:k:${urn}` }
  decision (urn: string, reference: string): string { return `${this.tag(urn)}:d:${urn}:${reference}` }
  moneyOp (urn: string, kind: 'credit' | 'debit', reference: string): string { return `${this.tag(urn)}:o:${kind}:${urn}:${reference}` }
  stream (urn: string): string { return `${this.tag(urn)}:s` }
  /** the card's own control settings, a hash of `kind|field` */
  cardControls (urn: string, last4: string): string { return `${this.tag(urn)}:cc:${urn}:${last4}` }
  /** the approved total of one card and control kind over one local day (YYYYMMDD) */
  controlDaily (urn: string, last4: string, kind: string, day: string): string { return `${this.tag(urn)}:cd:${urn}:${last4}:${kind}:${day}` }
  lifecycle (kind: string, id: string): string { return `${this.prefix}lc:${kind}:${id}` }
  lifecycleLock (kind: string, id: string): string { return `${this.prefix}lc:${kind}:${id}:lock` }
  /** one sorted set per rule and scope; entries are approved transactions scored by time */
  limit (urn: string, last4: string, limit: Pick<LimitCheck, 'ruleId' | 'per'>): string {
    const scope = limit.per === 'card' ? `${urn}:${last4}` : urn
    return `${this.tag(urn)}:l:${limit.ruleId}:${limit.per}:${scope}`
  }
}

/** A limit-window entry: amount first so a script can sum without a second lookup; reference makes it unique. */
export function limitMember (amount: number, reference: string): string {
  return `${amount}|${reference}`
}
