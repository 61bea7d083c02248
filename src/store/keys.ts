// Key layout. Every key of one customer carries the hash tag of the customer's bucket, `{b<n>}`, so that one
// Lua script only ever touches one Redis Cluster slot; the decision stream is per bucket for the same reason.
import type { LimitCheck } from '../domain/rule-hits.js'

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

/** The value a key part stands for (see `part`). */
export function unpart (p: string): string {
  return p.includes('%') ? p.replace(/%3A/g, ':').replace(/%25/g, '%') : p
}

/**
 * A decision key's parts: its tag (the prefix and the bucket, `<prefix>{b<n>}`, which every key of the
 * customer starts with), and the urn and reference it names.
 */
export function decisionKeyParts (key: string): { tag: string, urn: string, reference: string } {
  const at = key.lastIndexOf('}:d:')
  const tail = key.slice(at + 4)
  const sep = tail.indexOf(':')
  if (at < 0 || sep < 0) throw new Error(`not a decision key: ${key}`)
  return { tag: key.slice(0, at + 1), urn: unpart(tail.slice(0, sep)), reference: unpart(tail.slice(sep + 1)) }
}

export class Keys {
  constructor (readonly prefix: string) {}

  // The last urn's tag and key part: a decision asks for several keys of one customer in a row, and each
  // would hash the urn and look for characters to escape in it again.
  private lastUrn: string | null = null
  private lastTag = ''
  private lastUrnPart = ''

  private tag (urn: string): string {
    if (urn !== this.lastUrn) this.remember(urn)
    return this.lastTag
  }

  private urnPart (urn: string): string {
    if (urn !== this.lastUrn) this.remember(urn)
    return this.lastUrnPart
  }

  private remember (urn: string): void {
    this.lastTag = `${this.prefix}{b${bucketOf(urn)}}`
    this.lastUrnPart = part(urn)
    this.lastUrn = urn
  }

  customer (urn: string): string { return `${this.tag(urn)}:c:${this.urnPart(urn)}` }
  cards (urn: string): string { return `${this.tag(urn)}:k:${this.urnPart(urn)}` }
  decision (urn: string, reference: string): string { return `${this.tag(urn)}:d:${this.urnPart(urn)}:${part(reference)}` }
  moneyOp (urn: string, kind: 'credit' | 'debit' | 'note', reference: string): string { return `${this.tag(urn)}:o:${kind}:${this.urnPart(urn)}:${part(reference)}` }
  stream (urn: string): string { return this.bucketStream(bucketOf(urn)) }
  /** the bucket's outbox: its events in order (docs/api/events.md) */
  bucketStream (bucket: number): string { return `${this.prefix}{b${bucket}}:s` }
  /** the bucket's journal index: `<urn>:<reference>` parts scored by arrival (see `journal` in lua/includes/common.lua) */
  journalIndex (bucket: number): string { return `${this.bucketStream(bucket)}:j` }
  /** the bucket's audit records, scored by the store's clock (see lua/includes/audit.lua) */
  auditIndex (bucket: number): string { return `${this.bucketStream(bucket)}:a` }
  /**
   * the bucket's reference index, one hash of `refIndexShards` by the reference: `<reference>` -> the urns
   * (escaped, joined by ':') of its decisions in the bucket (see `refIndex` in lua/includes/common.lua)
   */
  refIndex (bucket: number, shard: number): string { return `${this.bucketStream(bucket)}:r:${shard}` }
  /** the decision key of a journal index member */
  decisionOf (bucket: number, member: string): string { return `${this.prefix}{b${bucket}}:d:${member}` }
  /** which instance's relay sends the bucket's events now */
  relayLease (bucket: number): string { return `${this.prefix}{b${bucket}}:relay` }
  /** events that could not be delivered, parked for an operator (one hash, any slot) */
  failedEvents (): string { return `${this.prefix}events:failed` }
  /** the card's own control settings, a hash of `kind|field` */
  cardControls (urn: string, last4: string): string { return `${this.tag(urn)}:cc:${this.urnPart(urn)}:${part(last4)}` }
  /** the approved total of one card and control kind over one local day (YYYYMMDD) */
  controlDaily (urn: string, last4: string, kind: string, day: string): string { return `${this.tag(urn)}:cd:${this.urnPart(urn)}:${part(last4)}:${kind}:${day}` }
  lifecycle (kind: string, id: string): string { return `${this.prefix}lc:${kind}:${part(id)}` }
  /** the customer's lifecycle records (`<kind>:<id>`, scored by their first save): see LIFECYCLE_INDEX_MAX */
  lifecycleIndex (urn: string): string { return `${this.tag(urn)}:lci:${this.urnPart(urn)}` }
  lifecycleLock (kind: string, id: string): string { return `${this.prefix}lc:${kind}:${part(id)}:lock` }
  /** one sorted set per rule and scope; entries are approved transactions scored by time */
  limit (urn: string, last4: string, limit: Pick<LimitCheck, 'ruleId' | 'per'>): string {
    const scope = limit.per === 'card' ? `${this.urnPart(urn)}:${part(last4)}` : part(urn)
    return `${this.tag(urn)}:l:${part(limit.ruleId)}:${limit.per}:${scope}`
  }
}

/**
 * The reference index is split in this many hashes per bucket so that each stays small enough for Redis's
 * compact encoding (a listpack, up to 128 fields by default) at a million decisions: ~60 fields each.
 */
export const REF_INDEX_SHARDS = 16

/** Which of a bucket's reference-index hashes holds an escaped reference; the same sum as `refIndex` in lua/includes/common.lua. */
export function refShard (referencePart: string): number {
  let h = 0
  for (let i = 0; i < referencePart.length; i++) {
    const c = referencePart.charCodeAt(i)
    // past ASCII a character is more than one byte of UTF-8: the sum is over the bytes
    if (c > 0x7f) return refShardOfBytes(referencePart)
    h = (h * 31 + c) % 65521
  }
  return h % REF_INDEX_SHARDS
}
function refShardOfBytes (referencePart: string): number {
  let h = 0
  for (const b of Buffer.from(referencePart, 'utf8')) h = (h * 31 + b) % 65521
  return h % REF_INDEX_SHARDS
}

/** The reference-index hash of a bucket, given its stream's key, that holds the reference: `Keys.refIndex` of its shard (`refShard`). */
export function refIndexOf (stream: string, reference: string): string { return `${stream}:r:${refShard(part(reference))}` }

/** A limit-window entry: amount first so a script can sum without a second lookup; reference makes it unique. */
export function limitMember (amount: number, reference: string): string {
  return `${amount}|${reference}`
}
