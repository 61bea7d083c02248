// Random authorizations (holds and final), reversals, statement postings of every type (repeated, with
// conflicting platformIds) and expiry runs at random times, on both stores, against an independent model of
// the books: after every step each customer's available and held equal the model's, and so the ledger.
// The seed is fresh on each run and printed (SEED=<n> replays one); the operation count is capped.
import t from 'tap'
import { randomInt } from 'node:crypto'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import { expireDue } from '../../src/settlement/expiry.js'
import type { Posting, PostingType } from '../../src/settlement/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { authInput, urnFor } from '../store/contract.js'
import { DAY } from '../helpers/posting-day.js'

const SEEDS = process.env.SEED !== undefined ? [Number(process.env.SEED)] : [1, 2, randomInt(2 ** 31)]
const OPS = 300

function rng (seed: number): (n: number) => number {
  let s = seed >>> 0
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return (((x ^ (x >>> 14)) >>> 0) % n)
  }
}

interface ModelDecision { urn: string, approved: boolean, final: boolean, holdLeft: number, expiresAt: number, expired: boolean, cleared: number, reversed: boolean, reversedWith?: number | null }
interface ModelCustomer { ledger: number }

class Books {
  readonly customers = new Map<string, ModelCustomer>()
  readonly decisions = new Map<string, ModelDecision>()
  readonly postings = new Map<string, string>()

  open (d: ModelDecision): boolean { return d.approved && !d.final && !d.expired && d.holdLeft > 0 }
  held (urn: string): number {
    let h = 0
    for (const d of this.decisions.values()) if (d.urn === urn && this.open(d)) h += d.holdLeft
    return h
  }

  available (urn: string): number { return (this.customers.get(urn)?.ledger ?? 0) - this.held(urn) }

  posting (p: Posting): void {
    const key = `${p.type}|${p.reference}|${p.urn}|${p.amount}`
    if (this.postings.has(p.platformId)) return
    this.postings.set(p.platformId, key)
    const c = this.customers.get(p.urn)
    if (c === undefined) return
    const d = this.decisions.get(p.reference)
    const mine = d !== undefined && d.urn === p.urn ? d : undefined
    switch (p.type) {
      case 'purchase':
        if (mine === undefined || !mine.approved) { c.ledger -= p.amount; return }
        // after expiry a clearing still posts (and is counted as posted)
        if (mine.expired) { c.ledger -= p.amount; mine.cleared += p.amount; return }
        // posted: the ledger pays the clearing; the hold's rest goes back (a final approval had paid it already)
        c.ledger += mine.final ? mine.holdLeft - p.amount : -p.amount
        mine.holdLeft = 0
        mine.cleared += p.amount
        return
      case 'reversal': {
        if (mine === undefined || !mine.approved) { c.ledger += p.amount; return }
        const rel = Math.min(mine.holdLeft, p.amount)
        mine.holdLeft -= rel
        if (mine.final) c.ledger += rel
        if (mine.cleared > 0) c.ledger += p.amount - rel
        return
      }
      case 'refund': case 'adjustment': c.ledger += p.amount; return
      case 'fee': c.ledger -= p.amount; break
      // lifecycle lines are not drawn here (test/settlement/contract.ts has them)
      default:
    }
  }
}

async function check (t: { same: (a: unknown, b: unknown, m: string) => unknown }, store: Store, books: Books, step: string): Promise<boolean> {
  for (const urn of books.customers.keys()) {
    const c = await store.getCustomer(urn)
    const want = { available: books.available(urn), held: books.held(urn) }
    const got = { available: c?.available, held: c?.held }
    if (got.available !== want.available || got.held !== want.held) {
      t.same(got, want, `${urn} after ${step}`)
      return false
    }
  }
  return true
}

const stores: Array<[string, (tt: { teardown: (fn: () => unknown) => void }) => Promise<Store>]> = [
  ['memory', async () => new MemoryStore()],
  ['redis', async (tt) => await sharedRedisStore(tt)]
]
for (const [name, make] of stores) {
  for (const seed of SEEDS) {
    t.test(`${name}: the books agree with the model (SEED=${seed})`, async (t) => {
      t.comment(`SEED=${seed}`)
      const r = rng(seed)
      const store = await make(t)
      const s = settlementFor(store)
      const books = new Books()
      const urns = [urnFor('rb'), urnFor('rb'), urnFor('rb')]
      for (const urn of urns) {
        await store.putCustomer(urn, {})
        await store.credit(urn, 50_000, `seed-${urn}`)
        books.customers.set(urn, { ledger: 50_000 })
      }
      const refs: string[] = []
      const lines: Posting[] = []
      // virtual time for expiry: holds expire within the run's span
      let now = Date.now()
      const types: PostingType[] = ['purchase', 'purchase', 'purchase', 'refund', 'reversal', 'fee', 'adjustment']
      for (let i = 0; i < OPS; i++) {
        const op = r(10)
        let step = ''
        if (op < 4) {
          const urn = urns[r(urns.length)] as string
          const amount = 1 + r(3000)
          const final = r(4) === 0
          const expiresAt = now + 1 + r(5000)
          const input = authInput(urn, { debitAmount: amount, fingerprint: `fp${amount}`, ...(final ? {} : { holdExpiresAtMs: expiresAt }) })
          const res = await store.authorize(input)
          const approved = res.code === '00'
          t.equal(approved, amount <= books.available(urn), `approval as the model says (${i})`)
          if (approved && final) books.customers.get(urn)!.ledger -= amount
          books.decisions.set(input.reference, { urn, approved, final, holdLeft: approved ? amount : 0, expiresAt, expired: false, cleared: 0, reversed: false })
          refs.push(input.reference)
          step = `authorize ${amount}${final ? ' final' : ''}`
        } else if (op < 5 && refs.length > 0) {
          const ref = refs[r(refs.length)] as string
          const d = books.decisions.get(ref)!
          const part = r(2) === 0 ? null : 1 + r(Math.max(1, d.holdLeft))
          const ok = await store.reverse(d.urn, ref, part).then(() => true, () => false)
          // a reversal asked again as before is a replay (nothing moves); another one is refused
          const replay = d.approved && d.reversed && d.reversedWith === part
          const allowed = replay || (d.approved && !d.reversed && (part === null || part <= d.holdLeft))
          t.equal(ok, allowed, `reversal as the model says (${i}: ${part ?? 'all'} of ${d.holdLeft}, approved ${String(d.approved)}, reversed ${String(d.reversed)}, expired ${String(d.expired)}, cleared ${d.cleared}, final ${String(d.final)})`)
          if (ok && !replay) {
            const rel = part ?? d.holdLeft
            d.holdLeft -= rel
            d.reversed = true
            d.reversedWith = part
            if (d.final) books.customers.get(d.urn)!.ledger += rel
          }
          step = `reverse ${ref} ${part ?? 'all'}`
        } else if (op < 8) {
          const replay = lines.length > 0 && r(6) === 0
          let p: Posting
          if (replay) {
            p = lines[r(lines.length)] as Posting
            if (r(3) === 0) p = { ...p, amount: p.amount + 1 }
          } else {
            const type = types[r(types.length)] as PostingType
            const known = refs.length > 0 && r(5) !== 0
            const ref = known ? refs[r(refs.length)] as string : `X${i}`
            const urn = known ? books.decisions.get(ref)!.urn : urns[r(urns.length)] as string
            const base = known ? Math.max(1, books.decisions.get(ref)!.holdLeft) : 500
            const amount = r(3) === 0 ? base : 1 + r(base * 2)
            p = { platformId: `P${seed}-${i}`, type, reference: ref, urn, last4: '4321', amount, currency: '356', postedAt: `${DAY}T10:00:00Z` }
            lines.push(p)
          }
          const res = await s.applyPosting(p, `S${i % 7}`, null)
          const prior = books.postings.get(p.platformId)
          if (prior !== undefined) t.equal(res.status, prior === `${p.type}|${p.reference}|${p.urn}|${p.amount}` ? 'replayed' : 'conflict', 'a platformId applies once')
          books.posting(p)
          step = `posting ${p.platformId} ${p.type} ${p.reference} ${p.amount}`
        } else {
          now += r(3000)
          const n = await expireDue(s, now, 1 + r(5))
          let want = 0
          for (const d of books.decisions.values()) {
            if (books.open(d) && d.expiresAt <= now) { d.expired = true; d.holdLeft = 0; want++ }
          }
          t.equal(n, want, `expired as many as the model (${i})`)
          step = `expire at +${now}`
        }
        if (!await check(t, store, books, `${i}: ${step}`)) return
      }
      t.pass(`${OPS} operations, books agree`)
    })
  }
}
