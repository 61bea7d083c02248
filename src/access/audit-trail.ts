// Reading the audit trail (GET /admin/v1/audit): newest first over every bucket, by time and key id, with a
// stable cursor, the way the decision journal is searched (src/store/time-index.ts). Each Redis bucket keeps
// its records in a sorted set written by the admin scripts (src/store/lua/includes/audit.lua).
import type { Redis, Cluster } from 'ioredis'
import type { AuditRecord } from '../domain/audit.js'
import { BUCKETS, Keys, bucketOf } from '../store/keys.js'
import { auditEntryOf } from '../store/audit-entry.js'
import { MemoryStore } from '../store/memory.js'
import { RedisStore } from '../store/redis.js'
import { BucketTimeIndex, before, decodeCursor, encodeCursor, type Pos } from '../store/time-index.js'
import { auditUrnOf, type Store } from '../store/types.js'

export interface AuditSearch {
  fromMs?: number
  toMs?: number
  keyId?: string
  /** only the records whose target is this customer (`target.urn`): one bucket read */
  urn?: string
  limit: number
  cursor?: string
}

export interface AuditPage { items: AuditRecord[], nextCursor: string | null }

export interface AuditReader {
  search (q: AuditSearch): Promise<AuditPage>
}

export { decodeCursor as decodeAuditCursor }

/** A stored record as the API gives it (Lua's cjson writes an empty object or array as {}). */
function recordOf (raw: string): AuditRecord {
  return auditEntryOf(JSON.parse(raw) as AuditRecord)
}

export class RedisAuditTrail implements AuditReader {
  private readonly index: BucketTimeIndex
  constructor (client: Redis | Cluster, prefix: string) {
    const keys = new Keys(prefix)
    this.index = new BucketTimeIndex(client, (bucket) => keys.auditIndex(bucket))
  }

  async search (q: AuditSearch): Promise<AuditPage> {
    const all = q.urn !== undefined ? [bucketOf(q.urn)] : Array.from({ length: BUCKETS }, (_, i) => i)
    const start = q.cursor !== undefined ? decodeCursor(q.cursor) : null
    const items: AuditRecord[] = []
    for await (const p of this.index.merged(all, q.fromMs ?? 0, q.toMs ?? Number.MAX_SAFE_INTEGER, true, start)) {
      const rec = recordOf(p.member)
      if (q.keyId !== undefined && rec.keyId !== q.keyId) continue
      if (q.urn !== undefined && rec.target.urn !== q.urn) continue
      items.push(rec)
      if (items.length >= q.limit) return { items, nextCursor: encodeCursor(p) }
    }
    return { items, nextCursor: null }
  }
}

/** The embedded store's audit trail, sorted when asked. */
export class MemoryAuditTrail implements AuditReader {
  constructor (private readonly store: MemoryStore) {}

  async search (q: AuditSearch): Promise<AuditPage> {
    const start = q.cursor !== undefined ? decodeCursor(q.cursor) : null
    const sorted = this.store.auditRecords()
      .map((rec) => ({ pos: { score: rec.atMs, bucket: bucketOf(auditUrnOf(rec)), member: rec.id } satisfies Pos, rec }))
      .sort((a, b) => (before(a.pos, b.pos, true) ? -1 : before(b.pos, a.pos, true) ? 1 : 0))
    const items: AuditRecord[] = []
    for (const { pos, rec } of sorted) {
      if (start !== null && !before(start, pos, true)) continue
      if (rec.atMs < (q.fromMs ?? 0) || rec.atMs >= (q.toMs ?? Number.MAX_SAFE_INTEGER)) continue
      if (q.keyId !== undefined && rec.keyId !== q.keyId) continue
      if (q.urn !== undefined && rec.target.urn !== q.urn) continue
      items.push(auditEntryOf(structuredClone(rec)))
      if (items.length >= q.limit) return { items, nextCursor: encodeCursor(pos) }
    }
    return { items, nextCursor: null }
  }
}

/** The audit trail of whichever store the service runs on. */
export function auditTrailFor (store: Store): AuditReader | null {
  if (store instanceof RedisStore) return new RedisAuditTrail(store.client, store.keys.prefix)
  if (store instanceof MemoryStore) return new MemoryAuditTrail(store)
  return null
}
