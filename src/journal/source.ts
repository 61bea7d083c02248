// Reading the journal: decisions by time over every bucket (oldest first for exports and backtests, newest
// first with a stable cursor for the admin search), and by reference alone.
//
// Each bucket keeps a time index of its decisions (`journal` in src/store/lua/includes/common.lua), so a time range is a merge of 1,024
// sorted sets: one ZRANGEBYSCORE page per bucket, then one GET per decision taken. On a Cluster every
// command stays on one slot; the merge happens here. Memory: one page per bucket at a time.
import { Redis, Cluster } from 'ioredis'
import type { JournalSource } from '../domain/journal.js'
import { BUCKETS, Keys, bucketOf, part, refShard } from '../store/keys.js'
import { decodeRecord } from '../store/record-format.js'
import { REF_LOOKUP_LUA, REINDEX_LUA } from '../store/lua.js'
import type { DecisionRecord } from '../store/types.js'
import type { MemoryStore } from '../store/memory.js'
import { decisionEntryOf, type DecisionEntry } from '../store/decision-entry.js'
import { BucketTimeIndex, before, decodeCursor, encodeCursor, type Pos } from '../store/time-index.js'

export { decodeCursor, encodeCursor }

export interface JournalSearch {
  urn?: string
  code?: string
  reason?: string
  rule?: string
  fromMs?: number
  toMs?: number
  limit: number
  cursor?: string
}

export interface JournalPage { items: DecisionEntry[], nextCursor: string | null }

export interface JournalReader extends JournalSource {
  search (q: JournalSearch): Promise<JournalPage>
  byReference (reference: string): Promise<DecisionEntry[]>
}

const PAGE = 100

export class RedisJournal implements JournalReader {
  private readonly keys: Keys
  private readonly index: BucketTimeIndex
  constructor (private readonly client: Redis | Cluster, prefix: string) {
    this.keys = new Keys(prefix)
    this.index = new BucketTimeIndex(client, (bucket) => this.keys.journalIndex(bucket))
  }

  private async records (ps: Pos[]): Promise<Array<DecisionRecord | null>> {
    return await Promise.all(ps.map(async (p) => {
      const key = this.keys.decisionOf(p.bucket, p.member)
      const raw = await this.client.get(key)
      return raw === null ? null : decodeRecord(key, raw)
    }))
  }

  async * read (fromMs: number, toMs: number): AsyncIterable<DecisionEntry> {
    const all = Array.from({ length: BUCKETS }, (_, i) => i)
    let batch: Pos[] = []
    const flush = async function * (this: RedisJournal): AsyncGenerator<DecisionEntry> {
      for (const r of await this.records(batch)) if (r !== null) yield decisionEntryOf(r)
      batch = []
    }
    for await (const p of this.index.merged(all, fromMs, toMs, false, null)) {
      batch.push(p)
      if (batch.length >= PAGE) yield * flush.call(this)
    }
    yield * flush.call(this)
  }

  async search (q: JournalSearch): Promise<JournalPage> {
    const buckets = q.urn !== undefined ? [bucketOf(q.urn)] : Array.from({ length: BUCKETS }, (_, i) => i)
    const start = q.cursor !== undefined ? decodeCursor(q.cursor) : null
    const items: DecisionEntry[] = []
    let last: Pos | null = null
    const want = q.urn !== undefined ? `${part(q.urn)}:` : null
    let batch: Pos[] = []
    const take = async (): Promise<boolean> => {
      const recs = await this.records(batch)
      for (let i = 0; i < batch.length; i++) {
        const r = recs[i]
        last = batch[i] as Pos
        if (r != null && matches(r, q)) items.push(decisionEntryOf(r))
        if (items.length >= q.limit) return true
      }
      batch = []
      return false
    }
    for await (const p of this.index.merged(buckets, q.fromMs ?? 0, q.toMs ?? Number.MAX_SAFE_INTEGER, true, start)) {
      if (want !== null && !p.member.startsWith(want)) continue
      batch.push(p)
      if (batch.length >= Math.min(PAGE, q.limit) && await take()) return { items, nextCursor: encodeCursor(last as unknown as Pos) }
    }
    if (batch.length > 0 && await take()) return { items, nextCursor: encodeCursor(last as unknown as Pos) }
    return { items, nextCursor: null }
  }

  /**
   * Puts every kept decision into the reference index (those stored before it existed); safe to run again
   * and beside live traffic: an entry is added once, and only for a decision still kept. Returns how many.
   */
  async reindex (progress: (bucketsDone: number, kept: number) => void = () => {}): Promise<number> {
    if (!('extauthReindex' in this.client)) this.client.defineCommand('extauthReindex', { lua: REINDEX_LUA, numberOfKeys: 1 })
    const scripts = this.client as unknown as RefLookup
    let kept = 0
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      for (let from = 0; ; from += PAGE * 5) {
        const members = await this.client.zrange(this.keys.journalIndex(bucket), from, from + PAGE * 5 - 1)
        if (members.length > 0) kept += await scripts.extauthReindex(this.keys.bucketStream(bucket), ...members)
        if (members.length < PAGE * 5) break
      }
      if ((bucket + 1) % 128 === 0) progress(bucket + 1, kept)
    }
    return kept
  }

  /**
   * Through the reference index (`refIndex` in src/store/lua/includes/common.lua): one field of every bucket, then the decisions it
   * names, in two round trips. On a single Redis the 1,024 fields are read by one script; on a Cluster one
   * HGET per bucket goes to its slot's node, side by side.
   */
  async byReference (reference: string): Promise<DecisionEntry[]> {
    const ref = part(reference)
    const shard = refShard(ref)
    const hashKeys = Array.from({ length: BUCKETS }, (_, b) => this.keys.refIndex(b, shard))
    const hits: Array<[number, string]> = []
    if (this.client instanceof Cluster) {
      const values = await Promise.all(hashKeys.map(async (k) => await this.client.hget(k, ref)))
      values.forEach((v, b) => { if (v !== null) hits.push([b, v]) })
    } else {
      if (!('extauthRefLookup' in this.client)) this.client.defineCommand('extauthRefLookup', { lua: REF_LOOKUP_LUA })
      const raw = await (this.client as unknown as RefLookup).extauthRefLookup(hashKeys.length, ...hashKeys, ref)
      for (let i = 0; i + 1 < raw.length; i += 2) hits.push([Number(raw[i]), String(raw[i + 1])])
    }
    const found: Pos[] = hits.flatMap(([bucket, urns]) => urns.split(':').map((u) => ({ score: 0, bucket, member: `${u}:${ref}` })))
    return (await this.records(found)).filter((r): r is DecisionRecord => r !== null && r.reference === reference).map(decisionEntryOf)
      .sort((a, b) => b.arrivedAt.localeCompare(a.arrivedAt))
  }
}

interface RefLookup {
  extauthRefLookup: (...args: Array<string | number>) => Promise<Array<string | number>>
  extauthReindex: (...args: string[]) => Promise<number>
}

function matches (r: DecisionRecord, q: JournalSearch): boolean {
  return (q.urn === undefined || r.urn === q.urn) && (q.code === undefined || r.code === q.code) &&
    (q.reason === undefined || r.reason === q.reason) && (q.rule === undefined || r.ruleId === q.rule)
}

/** The embedded store's journal: its decisions in memory, sorted when asked. */
export class MemoryJournal implements JournalReader {
  constructor (private readonly store: MemoryStore) {}

  private sorted (desc: boolean): Array<{ pos: Pos, rec: DecisionRecord }> {
    return this.store.decisionRecords()
      .map((rec) => ({ pos: { score: rec.arrivedAtMs, bucket: bucketOf(rec.urn), member: `${part(rec.urn)}:${part(rec.reference)}` }, rec }))
      .sort((a, b) => (before(a.pos, b.pos, desc) ? -1 : before(b.pos, a.pos, desc) ? 1 : 0))
  }

  async * read (fromMs: number, toMs: number): AsyncIterable<DecisionEntry> {
    for (const { rec } of this.sorted(false)) if (rec.arrivedAtMs >= fromMs && rec.arrivedAtMs < toMs) yield decisionEntryOf(rec)
  }

  async search (q: JournalSearch): Promise<JournalPage> {
    const start = q.cursor !== undefined ? decodeCursor(q.cursor) : null
    const items: DecisionEntry[] = []
    for (const { pos, rec } of this.sorted(true)) {
      if (start !== null && !before(start, pos, true)) continue
      if (rec.arrivedAtMs < (q.fromMs ?? 0) || rec.arrivedAtMs >= (q.toMs ?? Number.MAX_SAFE_INTEGER) || !matches(rec, q)) continue
      items.push(decisionEntryOf(rec))
      if (items.length >= q.limit) return { items, nextCursor: encodeCursor(pos) }
    }
    return { items, nextCursor: null }
  }

  async byReference (reference: string): Promise<DecisionEntry[]> {
    return this.store.decisionsByReference(reference).map(decisionEntryOf).sort((a, b) => b.arrivedAt.localeCompare(a.arrivedAt))
  }
}
