// The replay of one share of the journal (all of it, or the customers one worker owns): every entry decided
// by the baseline and the candidate side by side, compared, and tallied. Customers never share windows or
// daily totals, so shares by customer replay independently and their tallies add up (merge.ts).
import type { JournalEntry } from '../domain/journal.js'
import type { AuthRequest } from '../domain/request.js'
import { buildFacts } from '../rules/facts.js'
import type { CompiledRuleSet } from '../rules/types.js'
import { Replayer, takenAsRecorded, type ReplayOutcome } from './replay.js'
import { CustomerState } from './windows.js'
import { detached } from './entry-line.js'

const detachedOrNull = (s: string | null): string | null => (s === null ? null : detached(s))
import type { DirectionTotals } from './report.js'

/** A reference with the arrival that orders it, so shares merge into the order a single replay would give. */
export interface Timed<T> { atMs: number, item: T }

export interface Tally {
  baselineHits: number
  candidateHits: number
  toDeclined: DirectionTotals & { samples: Array<Timed<string>> }
  toApproved: DirectionTotals & { samples: Array<Timed<string>> }
}

export interface ShardResult {
  read: number
  decisions: number
  reproduced: number
  unreproduced: Array<Timed<{ reference: string, urn: string, recorded: string, replayed: string, kind: 'version' | 'version_differs' | 'limit' | 'other', detail: string, recordedVersion: string }>>
  approvedToDeclined: DirectionTotals
  declinedToApproved: DirectionTotals
  tallies: Record<string, Tally>
  changed: Array<Timed<{ reference: string, urn: string, from: string, to: string, baselineRule: string | null, candidateRule: string | null }>>
  changedCount: number
  firstSeenMs: number | null
  outOfOrder: number
}

export interface ShardOptions {
  candidate: CompiledRuleSet
  baseline: CompiledRuleSet
  baselineMode: 'given' | 'recorded'
  fromMs: number
  timezone: string
  defaultCurrency?: string
  samplesMax: number
  changedMax: number
}

function describe (o: Pick<ReplayOutcome, 'code' | 'reason' | 'ruleId' | 'control'>): string {
  const who = o.ruleId ?? o.control
  return `${o.code} (${o.reason}${who === null ? '' : ` ${who}`})`
}

function controlId (o: ReplayOutcome): string | null {
  return o.control === null ? null : `control:${o.control}`
}

/** Keeps the earliest `max` items (ties by arrival keep the order they came in). */
function keepEarliest<T> (list: Array<Timed<T>>, atMs: number, item: T, max: number): void {
  if (list.length < max) { list.push({ atMs, item }); return }
  // Entries come oldest first, so a full list is already the earliest unless this one arrived out of order.
  const last = list[list.length - 1] as Timed<T>
  if (atMs >= last.atMs) return
  list[list.length - 1] = { atMs, item }
  list.sort((a, b) => a.atMs - b.atMs)
}

export class ShardReplay {
  private readonly o: ShardOptions
  private readonly base: Replayer
  private readonly cand: Replayer
  private readonly factsOptions: { nowMs: number, timezone: string, risk: null, defaultCurrency?: string }
  private lastMs = -Infinity
  /** each customer's state in the baseline's replay and in the candidate's, found with one lookup */
  private readonly customers = new Map<string, { base: CustomerState, cand: CustomerState }>()
  readonly result: ShardResult

  constructor (o: ShardOptions) {
    this.o = o
    this.base = new Replayer(o.baseline, { timezone: o.timezone })
    this.cand = new Replayer(o.candidate, { timezone: o.timezone })
    this.factsOptions = { nowMs: 0, timezone: o.timezone, risk: null, ...(o.defaultCurrency !== undefined ? { defaultCurrency: o.defaultCurrency } : {}) }
    this.result = {
      read: 0, decisions: 0, reproduced: 0, unreproduced: [],
      approvedToDeclined: { count: 0, amount: 0 }, declinedToApproved: { count: 0, amount: 0 },
      tallies: {}, changed: [], changedCount: 0, firstSeenMs: null, outOfOrder: 0
    }
  }

  private tally (id: string): Tally {
    let t = this.result.tallies[id]
    if (t === undefined) {
      t = { baselineHits: 0, candidateHits: 0, toDeclined: { count: 0, amount: 0, samples: [] }, toApproved: { count: 0, amount: 0, samples: [] } }
      this.result.tallies[id] = t
    }
    return t
  }

  push (e: JournalEntry, atMs: number): void {
    const r = this.result
    const o = this.o
    r.read++
    r.firstSeenMs ??= atMs
    if (atMs < this.lastMs) r.outOfOrder++
    else this.lastMs = atMs

    this.factsOptions.nowMs = atMs
    const facts = buildFacts(e.request as unknown as AuthRequest, this.factsOptions)
    const versionAtHand = o.baselineMode === 'given' || e.rulesVersion === o.baseline.version
    let customer = this.customers.get(e.urn)
    if (customer === undefined) this.customers.set(detached(e.urn), customer = { base: new CustomerState(), cand: new CustomerState() })
    const b = versionAtHand ? this.base.decide(e, facts, atMs, customer.base) : this.base.keepRecorded(e, facts, atMs, customer.base)
    const c = this.cand.decide(e, facts, atMs, customer.cand)
    if (atMs < o.fromMs) return

    r.decisions++
    for (const id of b.hits) this.tally(id).baselineHits++
    for (const id of c.hits) this.tally(id).candidateHits++

    if (versionAtHand && e.code === b.code && e.reason === b.reason && (e.ruleId ?? null) === b.ruleId) {
      r.reproduced++
    } else {
      const kind = !versionAtHand
        ? 'version'
        : e.rulesVersion !== o.baseline.version
          ? 'version_differs'
          : b.reason === 'limit' || b.reason === 'control_limit' || e.reason === 'limit' || e.reason === 'control_limit' ? 'limit' : 'other'
      const detail = `replayed ${describe(b)}, recorded ${describe({ code: e.code, reason: e.reason, ruleId: e.ruleId, control: e.control?.kind ?? null })}`
      r.unreproduced.push({ atMs, item: { reference: detached(e.reference), urn: detached(e.urn), recorded: detached(e.code), replayed: b.code, kind, detail: detached(detail), recordedVersion: detached(e.rulesVersion) } })
    }

    if (b.code === c.code || takenAsRecorded(e)) return
    r.changedCount++
    keepEarliest(r.changed, atMs, { reference: detached(e.reference), urn: detached(e.urn), from: detached(b.code), to: detached(c.code), baselineRule: detachedOrNull(b.ruleId ?? controlId(b)), candidateRule: detachedOrNull(c.ruleId ?? controlId(c)) }, o.changedMax)
    if (b.code === '00') {
      r.approvedToDeclined.count++
      r.approvedToDeclined.amount += e.debit
      const id = c.ruleId ?? controlId(c)
      if (id !== null) this.count(this.tally(id).toDeclined, e, atMs)
    } else if (c.code === '00') {
      r.declinedToApproved.count++
      r.declinedToApproved.amount += e.debit
      const id = b.ruleId ?? controlId(b)
      if (id !== null) this.count(this.tally(id).toApproved, e, atMs)
    }
  }

  private count (d: DirectionTotals & { samples: Array<Timed<string>> }, e: JournalEntry, atMs: number): void {
    d.count++
    d.amount += e.debit
    keepEarliest(d.samples, atMs, detached(e.reference), this.o.samplesMax)
  }
}
