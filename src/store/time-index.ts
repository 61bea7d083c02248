// A time index kept per bucket (a sorted set scored by epoch ms in each of the 1,024 buckets, so that a script
// writing it stays on its customer's slot) read as one: a time range is a merge of the buckets' sorted sets,
// one ZRANGEBYSCORE page per bucket at a time, newest or oldest first, with a stable cursor. On a Cluster every
// command stays on one slot; the merge happens here. The decision journal and the audit trail read this way.
import type { Redis, Cluster } from 'ioredis'

/** A position in the newest-first order: score desc, then bucket desc, then member desc. */
export interface Pos { score: number, bucket: number, member: string }

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
export function before (a: Pos, b: Pos, desc: boolean): boolean {
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

export class BucketTimeIndex {
  constructor (private readonly client: Redis | Cluster, private readonly keyOf: (bucket: number) => string) {}

  /** one bucket's index entries in [fromMs, toMs), in order, after `after` */
  private async page (bucket: number, fromMs: number, toMs: number, desc: boolean, after: Pos | null): Promise<Pos[]> {
    const key = this.keyOf(bucket)
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
  async * merged (buckets: number[], fromMs: number, toMs: number, desc: boolean, start: Pos | null): AsyncGenerator<Pos> {
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
}
