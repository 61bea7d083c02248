// SETTLEMENT_MODE=holds: the simulated platform's statements. Between steps the platform publishes what it
// posted against the approvals it saw (clearings for the amount, partial and over clearings, a clearing after
// the hold expired, reversals, refunds of what was cleared), together with lines of earlier statements (an
// overlapping statement) and now and then a whole earlier statement again (a re-import). Each is imported
// through the real import path (src/settlement/import.ts); one import in a few is cut short by a fault after
// some postings applied, and imported again. The model applies the same lines by its own rules, each
// platformId once; the invariant books-agree then holds each customer's available, held and ledger to the
// model's, and each statement's applied and duplicate counts to what the model applied first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seededRandom } from '../../../src/sim/prng.js'
import { importStatement } from '../../../src/settlement/import.js'
import { POSTING_HORIZON_MS, POSTING_RETENTION_MS, type Posting, type PostingType, type SettlementStore } from '../../../src/settlement/types.js'
import type { Store } from '../../../src/store/types.js'
import { refKey, type SimContext } from './context.js'
import type { ModelDecision } from './model.js'

interface Line { platformId: string, type: PostingType, reference: string, urn: string, last4: string, amount: string, currency: string, postedAt: string }
interface Published { id: string, lines: Line[], atMs: number }

/** postings applied ahead of a fault, at most, in an import cut short */
const CUT_AFTER_MAX = 4

export class SimPlatform {
  /** platformId → the statement that applied it first (the model's record) */
  private readonly applied = new Map<string, string>()
  private readonly published: Published[] = []
  private seq = 0
  private readonly dir = mkdtempSync(join(tmpdir(), 'extauth-sim-statements-'))
  /** its own draws, so that a run's operations are the same seed for seed as without statements */
  private readonly rnd: () => number
  readonly counts = { statements: 0, lines: 0, reimports: 0, interrupted: 0, duplicateLines: 0, refusedTooOld: 0 }

  constructor (seed: number) {
    this.rnd = seededRandom(seed ^ 0x5eed5)
  }

  close (): void {
    rmSync(this.dir, { recursive: true, force: true })
  }

  /**
   * Publishes a statement of the approvals the platform saw, imports it (and maybe an earlier one again), and
   * applies it to the model. `skip` are references a client may still act on (repeats, reversals in flight).
   */
  async publish (sim: SimContext, store: Store, settlement: SettlementStore, skip: Set<string>): Promise<void> {
    const { model } = sim
    const rnd = this.rnd
    const now = sim.clock.now()
    const postedAt = new Date(now).toISOString()
    const lines: Line[] = []
    const lineOf = (type: PostingType, d: ModelDecision, amount: number): Line =>
      ({ platformId: `P${sim.opts.seed}-${++this.seq}`, type, reference: d.reference, urn: d.urn, last4: d.last4, amount: String(amount), currency: 'EUR', postedAt })
    const line = (type: PostingType, d: ModelDecision, amount: number): void => { lines.push(lineOf(type, d, amount)) }
    // what the model's customers can spend while this statement is drawn up (no line takes one below zero)
    const spare = new Map<string, number>()
    const canDebit = (urn: string, n: number): boolean => {
      const left = spare.get(urn) ?? model.customers.get(urn)?.available ?? 0
      if (n > left) return false
      spare.set(urn, left - n)
      return true
    }
    for (const [key, d] of model.decisions) {
      if (lines.length >= 8) break
      if (d.code !== '00' || d.hold !== true || d.debit <= 0 || skip.has(key) || d.expiresAtMs <= now || rnd() >= 0.3) continue
      const x = rnd()
      const cleared = d.cleared ?? 0
      if (d.expired === true) {
        // a clearing after the hold expired: debited again
        if (cleared === 0 && canDebit(d.urn, d.debit)) line('purchase', d, d.debit)
      } else if (d.held > 0) {
        if (x < 0.5) line('purchase', d, d.held)
        else if (x < 0.65 && d.held > 1) line('purchase', d, d.held - 1 - Math.floor(rnd() * (d.held - 1)))
        else if (x < 0.75) {
          const over = 1 + Math.floor(rnd() * 500)
          if (canDebit(d.urn, over)) line('purchase', d, d.held + over)
        } else if (x < 0.9) line('reversal', d, d.held)
        else if (x < 0.95) {
          // the reference cleared on another card: no authorization of that card, a force post; the hold stays
          const amount = 1 + Math.floor(rnd() * 300)
          if (canDebit(d.urn, amount)) lines.push({ ...lineOf('purchase', d, amount), last4: d.last4 === '0000' ? '0001' : '0000' })
        }
      } else if (cleared > 0 && x < 0.3) {
        line('refund', d, 1 + Math.floor(rnd() * cleared))
      }
    }
    // an overlapping statement: a few lines an earlier one carried (within the retention of applied postings,
    // as the documentation promises: the time jumps of a run go past it)
    const within = this.published.filter((p) => p.atMs > now - POSTING_RETENTION_MS / 2)
    const earlier = within[Math.floor(rnd() * within.length)]
    if (earlier !== undefined && rnd() < 0.5) {
      for (const l of earlier.lines.slice(0, 1 + Math.floor(rnd() * 3))) { lines.push(l); this.counts.duplicateLines++ }
    }
    if (lines.length === 0) return
    const st: Published = { id: `S${sim.opts.seed}-${this.published.length + 1}`, lines, atMs: now }
    within.push(st)
    this.published.push(st)
    await this.importOne(sim, store, settlement, st, rnd() < 0.25)
    if (rnd() < 0.2) {
      // the same statement, or an earlier one, imported again: nothing changes
      const again = within[Math.floor(rnd() * within.length)] as Published
      this.counts.reimports++
      await this.importOne(sim, store, settlement, again, false)
    }
  }

  private async importOne (sim: SimContext, store: Store, settlement: SettlementStore, st: Published, cut: boolean): Promise<void> {
    const file = join(this.dir, `${st.id}.ndjson`)
    const times = st.lines.map((l) => l.postedAt).sort()
    const header = { statement: { id: st.id, from: times[0], to: times[times.length - 1], complete: false } }
    writeFileSync(file, [header, ...st.lines].map((l) => JSON.stringify(l)).join('\n') + '\n')
    this.counts.statements++
    this.counts.lines += st.lines.length
    // a line posted longer ago than the record of an applied posting is surely kept (an overlapping statement
    // carries an earlier one's lines, and a re-import brings them back later still): the whole file is refused,
    // naming each such line, and nothing changes (it may have been applied and forgotten)
    const now = sim.clock.now()
    const old = st.lines.flatMap((l, i) => (now - Date.parse(l.postedAt) >= POSTING_HORIZON_MS ? [i + 2] : []))
    if (old.length > 0) {
      const r = await importStatement({ store, settlement, file, clock: sim.clock.now })
      this.counts.refusedTooOld++
      const named = r.ok ? [] : r.errors.filter((e) => /days ago or more/.test(e.error)).map((e) => e.line)
      if (r.ok || JSON.stringify(named) !== JSON.stringify(old)) {
        sim.violation('books-agree', `statement ${st.id} with lines ${old.join(', ')} posted past the horizon: ${r.ok ? 'imported' : `refused naming lines ${named.join(', ')}`}`)
      }
      await booksAgree(sim, store, new Set(st.lines.map((l) => l.urn)))
      return
    }
    if (cut) {
      // a fault after a few postings applied (the process or the store gone mid-import); the second import finishes
      let n = 1 + Math.floor(this.rnd() * CUT_AFTER_MAX)
      const faulty: SettlementStore = Object.create(settlement) as SettlementStore
      faulty.applyPosting = async (p, id, v) => {
        if (n-- <= 0) throw new Error('injected fault: the import is cut short')
        return await settlement.applyPosting(p, id, v)
      }
      try {
        await importStatement({ store, settlement: faulty, file, clock: sim.clock.now, inFlightMax: 1 })
        this.applyModel(sim, st)
      } catch {
        this.counts.interrupted++
      }
    }
    const r = await importStatement({ store, settlement, file, clock: sim.clock.now })
    if (!r.ok) { sim.violation('books-agree', `statement ${st.id} refused: ${JSON.stringify(r.errors)}`); return }
    const { first, elsewhere } = this.applyModel(sim, st)
    await booksAgree(sim, store, new Set(st.lines.map((l) => l.urn)))
    if (r.report.applied !== first || r.report.duplicates !== elsewhere || r.report.conflicts !== 0) {
      sim.violation('books-agree', `statement ${st.id}: applied ${r.report.applied}, duplicates ${r.report.duplicates}, conflicts ${r.report.conflicts}; the model: each platformId once, ${first} first applied by it, ${elsewhere} by another`)
    }
  }

  /** The model applies the statement's lines it has not applied before; counts its lines by the statement that applied each first. */
  private applyModel (sim: SimContext, st: Published): { first: number, elsewhere: number } {
    let first = 0
    let elsewhere = 0
    for (const l of st.lines) {
      const by = this.applied.get(l.platformId)
      if (by !== undefined) { if (by === st.id) first++; else elsewhere++; continue }
      this.applied.set(l.platformId, st.id)
      first++
      applyLine(sim, { ...l, amount: Number(l.amount) })
      sim.touchedUrns.add(l.urn)
      sim.touchedRefs.add(refKey(l.urn, l.reference))
    }
    return { first, elsewhere }
  }
}

/** books-agree: each customer's available, held and ledger (available + held) in extauth are the model's */
async function booksAgree (sim: SimContext, store: Store, urns: Set<string>): Promise<void> {
  for (const urn of urns) {
    const m = sim.model.customers.get(urn)
    const c = await store.getCustomer(urn)
    if (m === undefined || c === null) continue
    let held = 0
    for (const d of sim.model.decisions.values()) if (d.urn === urn && d.code === '00' && d.hold === true) held += d.held
    for (const o of sim.model.orphanHolds) if (o.urn === urn) held += o.held
    if (c.available !== m.available || c.held !== held) {
      sim.violation('books-agree', `customer ${JSON.stringify(urn)}: extauth available ${c.available} held ${c.held} ledger ${c.available + c.held}, the model ${m.available} / ${held} / ${m.available + held}`)
    }
  }
}

/** One posting, by the model's rules (docs/operations/settlement.md, the outcomes table). */
function applyLine (sim: SimContext, p: Posting): void {
  const c = sim.model.customers.get(p.urn)
  const d = sim.model.decision(p.urn, p.reference)
  if (c === undefined || d === undefined) throw new Error(`the simulated platform posted ${p.platformId} for no decision`)
  if (p.type === 'purchase' && p.last4 !== '' && p.last4 !== d.last4) {
    // no authorization of that card: a force post, debited; the decision's hold untouched
    c.available -= p.amount
  } else if (p.type === 'purchase') {
    if (d.expired === true) {
      c.available -= p.amount
    } else {
      const take = Math.min(p.amount, d.held)
      const rest = d.held - take
      sim.model.settleHold(d, rest, take)
      c.available += rest - (p.amount - take)
    }
    d.cleared = (d.cleared ?? 0) + p.amount
  } else if (p.type === 'reversal') {
    const rel = Math.min(d.held, p.amount)
    if (rel > 0) sim.model.settleHold(d, rel, 0)
    c.available += rel + ((d.cleared ?? 0) > 0 ? p.amount - rel : 0)
  } else if (p.type === 'refund') {
    c.available += p.amount
  }
}
