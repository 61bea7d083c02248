// Reading the journal: decisions by time over every bucket (oldest first for exports and backtests, newest
// first with a stable cursor for the admin search), and by reference alone.
//
// Each bucket keeps a time index of its decisions (`journal` in lua.ts), so a time range is a merge of 1,024
// sorted sets: one ZRANGEBYSCORE page per bucket, then one GET per decision taken. On a Cluster every
// command stays on one slot; the merge happens here. Memory: one page per bucket at a time.
import { Redis, Cluster } from 'ioredis'
import type { JournalSource } from '../domain/journal.js'
import { BUCKETS, Keys, bucketOf, part } from '../store/keys.js'
import { normalizeRecord } from '../store/record.js'
import type { DecisionRecord } from '../store/types.js'
import type { MemoryStore } from '../store/memory.js'
import { journalEntryOf, type StoredJournalEntry } from './entry.js'

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

export interface JournalPage { items: StoredJournalEntry[], nextCursor: string | null }

export interface JournalReader extends JournalSource {
  search (q: JournalSearch): Promise<JournalPage>
  byReference (reference: string): Promise<StoredJournalEntry[]>
}

/** A position in the newest-first order: score desc, then bucket desc, then member desc. */
interface Pos { score: number, bucket: number, member: string }

export function encodeCursor (p: Pos): string {
  return Buffer.from(JSON.stringify([p.score, p.bucket, p.member])).toString('base64url')
}

export function decodeCursor (c: string): Pos | null {
  try {
    const [score, bucket, member] = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as [unknown, unknown, unknown]
    if (typeof score !== 'number' || typeof bucket !== 'number' || typeof member !== 'string') return null
    return { score, bucket, member }
  } catch {
    return null
  }
}

/** a before b in the given order */
function before (a: Pos, b: Pos, desc: boolean): boolean {
  if (a.score !== b.score) return desc ? a.score > b.score : a.score < b.score
  if (a.bucket !== b.bucket) return desc ? a.bucket > b.bucket : a.bucket < b.bucket
  return desc ? a.member > b.member : a.member < b.member
}

class Heap {
  private readonly a: Array<{ pos: Pos, i: number }> = []
  constructor (private readonly desc: boolean) {}
  get size (): number { return this.a.length }
  push (x: { pos: Pos, i: number }): void {
    const a = this.a
    a.push(x)
    for (let k = a.length - 1; k > 0;) {
      const p = (k - 1) >> 1
      if (!before((a[k] as typeof x).pos, (a[p] as typeof x).pos, this.desc)) break
      ;[a[k], a[p]] = [a[p] as typeof x, a[k] as typeof x]
      k = p
    }
  }

  pop (): { pos: Pos, i: number } | undefined {
    const a = this.a
    const top = a[0]
    const last = a.pop()
    if (a.length > 0 && last !== undefined) {
      a[0] = last
      for (let k = 0; ;) {
        const l = 2 * k + 1
        const r = l + 1
        let m = k
        if (l < a.length && before((a[l] as typeof last).pos, (a[m] as typeof last).pos, this.desc)) m = l
        if (r < a.length && before((a[r] as typeof last).pos, (a[m] as typeof last).pos, this.desc)) m = r
        if (m === k) break
        ;[a[k], a[m]] = [a[m] as typeof last, a[k] as typeof last]
        k = m
      }
    }
    return top
  }
}

const PAGE = 100

export class RedisJournal implements JournalReader {
  private readonly keys: Keys
  constructor (private readonly client: Redis | Cluster, prefix: string) {
    this.keys = new Keys(prefix)
  }

  /** one bucket's index entries in [fromMs, toMs), in order, after `after` */
  private async page (bucket: number, fromMs: number, toMs: number, desc: boolean, after: Pos | null): Promise<Pos[]> {
    const key = this.keys.journalIndex(bucket)
    // entries sharing the cursor's score are fetched again and skipped by position
    const lo = desc ? String(fromMs) : after !== null ? String(after.score) : String(fromMs)
    const hi = desc ? (after !== null ? String(after.score) : `(${toMs}`) : `(${toMs}`
    const out: Pos[] = []
    let offset = 0
    for (;;) {
      const raw = desc
        ? await this.client.zrevrangebyscore(key, hi, lo, 'WITHSCORES', 'LIMIT', offset, PAGE)
        : await this.client.zrangebyscore(key, lo, hi, 'WITHSCORES', 'LIMIT', offset, PAGE)
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const pos = { score: Number(raw[i + 1]), bucket, member: raw[i] as string }
        if (after === null || before(after, pos, desc)) out.push(pos)
      }
      offset += PAGE
      if (out.length > 0 || raw.length < 2 * PAGE) return out
    }
  }

  /** every bucket's index merged into one order */
  private async * merged (buckets: number[], fromMs: number, toMs: number, desc: boolean, start: Pos | null): AsyncGenerator<Pos> {
    const heads: Pos[][] = []
    const heap = new Heap(desc)
    for (let i = 0; i < buckets.length; i += 128) {
      const pages = await Promise.all(buckets.slice(i, i + 128).map(async (b) => await this.page(b, fromMs, toMs, desc, start)))
      pages.forEach((p, j) => {
        heads[i + j] = p
        if (p.length > 0) heap.push({ pos: p[0] as Pos, i: i + j })
      })
    }
    const taken = new Array<number>(buckets.length).fill(0)
    while (heap.size > 0) {
      const top = heap.pop() as { pos: Pos, i: number }
      yield top.pos
      const list = heads[top.i] as Pos[]
      taken[top.i] = (taken[top.i] as number) + 1
      if ((taken[top.i] as number) >= list.length) {
        heads[top.i] = await this.page(buckets[top.i] as number, fromMs, toMs, desc, top.pos)
        taken[top.i] = 0
      }
      const next = (heads[top.i] as Pos[])[taken[top.i] as number]
      if (next !== undefined) heap.push({ pos: next, i: top.i })
    }
  }

  private async records (ps: Pos[]): Promise<Array<DecisionRecord | null>> {
    return await Promise.all(ps.map(async (p) => {
      const raw = await this.client.get(this.keys.decisionOf(p.bucket, p.member))
      return raw === null ? null : normalizeRecord(JSON.parse(raw))
    }))
  }

  async * read (fromMs: number, toMs: number): AsyncIterable<StoredJournalEntry> {
    const all = Array.from({ length: BUCKETS }, (_, i) => i)
    let batch: Pos[] = []
    const flush = async function * (this: RedisJournal): AsyncGenerator<StoredJournalEntry> {
      for (const r of await this.records(batch)) if (r !== null) yield journalEntryOf(r)
      batch = []
    }
    for await (const p of this.merged(all, fromMs, toMs, false, null)) {
      batch.push(p)
      if (batch.length >= PAGE) yield * flush.call(this)
    }
    yield * flush.call(this)
  }

  async search (q: JournalSearch): Promise<JournalPage> {
    const buckets = q.urn !== undefined ? [bucketOf(q.urn)] : Array.from({ length: BUCKETS }, (_, i) => i)
    const start = q.cursor !== undefined ? decodeCursor(q.cursor) : null
    const items: StoredJournalEntry[] = []
    let last: Pos | null = null
    const want = q.urn !== undefined ? `${part(q.urn)}:` : null
    let batch: Pos[] = []
    const take = async (): Promise<boolean> => {
      const recs = await this.records(batch)
      for (let i = 0; i < batch.length; i++) {
        const r = recs[i]
        last = batch[i] as Pos
        if (r != null && matches(r, q)) items.push(journalEntryOf(r))
        if (items.length >= q.limit) return true
      }
      batch = []
      return false
    }
    for await (const p of this.merged(buckets, q.fromMs ?? 0, q.toMs ?? Number.MAX_SAFE_INTEGER, true, start)) {
      if (want !== null && !p.member.startsWith(want)) continue
      batch.push(p)
      if (batch.length >= Math.min(PAGE, q.limit) && await take()) return { items, nextCursor: encodeCursor(last as unknown as Pos) }
    }
    if (batch.length > 0 && await take()) return { items, nextCursor: encodeCursor(last as unknown as Pos) }
    return { items, nextCursor: null }
  }

  async byReference (reference: string): Promise<StoredJournalEntry[]> {
    const match = `*:${part(reference).replace(/[*?[\]\\]/g, '\\$&')}`
    const found: Pos[] = []
    for (let i = 0; i < BUCKETS; i += 128) {
      const pages = await Promise.all(Array.from({ length: Math.min(128, BUCKETS - i) }, async (_, j) => {
        const bucket = i + j
        const out: Pos[] = []
        let cursor = '0'
        do {
          const [next, raw] = await this.client.zscan(this.keys.journalIndex(bucket), cursor, 'MATCH', match, 'COUNT', 1000)
          cursor = next
          for (let k = 0; k + 1 < raw.length; k += 2) {
            const member = raw[k] as string
            // the member is `urn:reference` with both parts escaped: the reference is what follows the only bare ':'
            if (member.slice(member.indexOf(':') + 1) === part(reference)) out.push({ score: Number(raw[k + 1]), bucket, member })
          }
        } while (cursor !== '0')
        return out
      }))
      found.push(...pages.flat())
    }
    return (await this.records(found)).filter((r): r is DecisionRecord => r !== null).map(journalEntryOf)
      .sort((a, b) => b.arrivedAt.localeCompare(a.arrivedAt))
  }
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

  async * read (fromMs: number, toMs: number): AsyncIterable<StoredJournalEntry> {
    for (const { rec } of this.sorted(false)) if (rec.arrivedAtMs >= fromMs && rec.arrivedAtMs < toMs) yield journalEntryOf(rec)
  }

  async search (q: JournalSearch): Promise<JournalPage> {
    const start = q.cursor !== undefined ? decodeCursor(q.cursor) : null
    const items: StoredJournalEntry[] = []
    for (const { pos, rec } of this.sorted(true)) {
      if (start !== null && !before(start, pos, true)) continue
      if (rec.arrivedAtMs < (q.fromMs ?? 0) || rec.arrivedAtMs >= (q.toMs ?? Number.MAX_SAFE_INTEGER) || !matches(rec, q)) continue
      items.push(journalEntryOf(rec))
      if (items.length >= q.limit) return { items, nextCursor: encodeCursor(pos) }
    }
    return { items, nextCursor: null }
  }

  async byReference (reference: string): Promise<StoredJournalEntry[]> {
    return this.sorted(true).filter(({ rec }) => rec.reference === reference).map(({ rec }) => journalEntryOf(rec))
  }
}
