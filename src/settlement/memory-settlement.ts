// The settlement on the embedded store: the same steps as the scripts of lua/ (lua.ts), each run to completion
// without an await in between (so atomic, as the store's own methods are). It works on the store's state
// through MemoryState, the part of MemoryStore these steps read and write.
import { bucketOf, limitMember, unpart } from '../store/keys.js'
import type { MemoryStore } from '../store/memory.js'
import type { AuditContext } from '../domain/audit.js'
import type { DecisionRecord } from '../store/types.js'
import { apiError } from '../errors.js'
import {
  type DecisionSettlement,
  POSTING_RETENTION_MS, bucketOfException, type ExceptionFilter, type ExceptionKind, type LifecycleVerdict, type NewException, type Outcome,
  type Posting, type PostingResult, type ReconException, type ResolveAction, type SettlementStore, type StatementReport
} from './types.js'
import { pageOf } from './exception-page.js'

interface StoredRecord extends DecisionRecord { reversalRequested: string | null }
interface WindowEntry { score: number, member: string }
/** MemoryStore's private state, as these steps use it (the same names) */
interface MemoryState {
  clock: () => number
  keys: { decision: (urn: string, reference: string) => string }
  customers: Map<string, { available: number, held: number }>
  getRecord: (key: string) => StoredRecord | undefined
  putRecord: (key: string, rec: StoredRecord, ttlMs: number | null) => void
  removeEntry: (key: string, member: string) => WindowEntry | undefined
  windowAdd: (key: string, entry: WindowEntry) => void
  giveBackDaily: (key: string, amount: number) => void
  emit: (urn: string, type: string, data: Record<string, unknown>) => void
  audit: (ctx: AuditContext | undefined, before: Record<string, unknown> | null, after: Record<string, unknown> | null) => void
  decisions: Map<string, { expiresAtMs: number }>
}

export class MemorySettlement implements SettlementStore {
  private readonly s: MemoryState
  /** a decision's settlement, by its key: cleared amount, and when it expired */
  private readonly states = new Map<string, { cl: number, ex?: number, at?: number }>()
  private readonly postings = new Map<string, { value: { f: string, o: Outcome, s: string, x: string[] }, expiresAtMs: number }>()
  private readonly exceptions = new Map<string, ReconException>()
  private readonly statements = new Map<string, StatementReport>()

  constructor (private readonly store: MemoryStore) {
    this.s = store as unknown as MemoryState
  }

  /**
   * A decision's settlement; `at` is the decision's decidedAtMs, so that a decision forgotten and made anew under
   * the same reference starts afresh (Redis: the state's key expires with the decision's)
   */
  private stateOf (key: string): { cl: number, ex?: number, at?: number } {
    const ttl = this.s.decisions.get(key)
    const st = this.states.get(key)
    if (ttl === undefined || ttl.expiresAtMs <= this.s.clock() || (st !== undefined && st.at !== this.s.getRecord(key)?.decidedAtMs)) this.states.delete(key)
    return this.states.get(key) ?? { cl: 0 }
  }

  /** as settleRecord in lua/includes/settlement.lua */
  private settleRecord (key: string, rec: StoredRecord, cust: { held: number }, rel: number, keep: number): void {
    const held = Number(rec.held)
    const member = this.store.holdMember(key, rec.last4)
    if (this.store.holds.has(member)) {
      cust.held -= rel + keep
      if (held - rel - keep <= 0) this.store.holds.remove(member)
      else this.store.holds.setAmount(member, held - rel - keep)
    }
    let limitEntries = rec.limitEntries
    let controlEntries = rec.controlEntries
    if (rel > 0) {
      limitEntries = []
      for (const [wkey, m] of rec.limitEntries) {
        const removed = this.s.removeEntry(wkey, m)
        if (removed !== undefined && held - rel > 0) {
          const back = limitMember(held - rel, rec.reference)
          this.s.windowAdd(wkey, { score: removed.score, member: back })
          limitEntries.push([wkey, back])
        }
      }
      controlEntries = []
      for (const [dkey] of rec.controlEntries) {
        this.s.giveBackDaily(dkey, rel)
        if (held - rel > 0) controlEntries.push([dkey, String(held - rel)])
      }
    }
    const left = held - rel - keep
    if (left <= 0) { limitEntries = []; controlEntries = [] }
    this.s.putRecord(key, { ...rec, held: String(left), released: String(Number(rec.released) + rel), limitEntries, controlEntries }, null)
  }

  async applyPosting (p: Posting, statementId: string, lifecycle: LifecycleVerdict | null): Promise<PostingResult> {
    const fingerprint = postingFingerprint(p)
    const bucket = bucketOf(p.urn)
    const pkey = `b${bucket}~${p.platformId}`
    const now = this.s.clock()
    const kept = this.postings.get(pkey)
    if (kept !== undefined && kept.expiresAtMs > now) {
      const v = kept.value
      if (v.f === fingerprint) return { status: 'replayed', outcome: v.o, statementId: v.s, exceptions: v.x, available: null }
      // the platformId applied before with other content: not applied; queued for an operator, once per statement
      const id = `${pkey}~c~${statementId}`
      if (!this.exceptions.has(id)) {
        const x: ReconException = {
          id, kind: 'platform_id_conflict', status: 'open', urn: p.urn, reference: p.reference, last4: p.last4, platformId: p.platformId,
          statementId, postingType: p.type, outcome: v.o, amount: String(p.amount), accept: { action: 'none', amount: '0' },
          detail: conflictDetail(v.s, v.o), createdAtMs: now
        }
        this.exceptions.set(id, x)
        this.s.emit(p.urn, 'reconciliation.exception', { ...x })
      }
      return { status: 'conflict', outcome: v.o, statementId: v.s, exceptions: [id], available: null }
    }
    const exceptions: string[] = []
    let outcome: Outcome = 'unmatched'
    const except = (kind: ExceptionKind, suffix: string, amount: number, accept: ReconException['accept']['action'], acceptAmount: number, detail: string): void => {
      const id = `${pkey}${suffix}`
      if (this.exceptions.has(id)) return
      const x: ReconException = {
        id, kind, status: 'open', urn: p.urn, reference: p.reference, last4: p.last4, platformId: p.platformId, statementId,
        postingType: p.type, outcome, amount: String(amount), accept: { action: accept, amount: String(acceptAmount) }, detail, createdAtMs: now
      }
      this.exceptions.set(id, x)
      this.s.emit(p.urn, 'reconciliation.exception', { ...x })
      exceptions.push(id)
    }
    const cust = this.s.customers.get(p.urn)
    const amt = p.amount
    let delta = 0
    if (cust === undefined) {
      except('unmatched', '', amt, 'none', 0, `no customer ${p.urn}`)
    } else if (p.type === 'purchase') {
      const key = this.s.keys.decision(p.urn, p.reference)
      const found = this.s.getRecord(key)
      // a line that names a card matches only a decision of that card
      const rec = ofCard(found, p.last4)
      if (rec === undefined) {
        outcome = 'force_post'; delta = -amt
        except('force_post', '', amt, 'none', 0, found === undefined ? 'no authorization' : `no authorization of card ${p.last4} (the reference was authorized on card ${found.last4})`)
      } else if (rec.code !== '00') {
        outcome = 'declined_here'; delta = -amt
        except('declined_here', '', amt, 'none', 0, `answered ${rec.code}`)
      } else {
        const st = this.stateOf(key)
        const cleared = st.cl + amt
        if (st.ex !== undefined) {
          outcome = 'late_clearing'; delta = -amt
          except('late_clearing', '', amt, 'none', 0, 'hold expired')
        } else {
          const held = Number(rec.held)
          const take = Math.min(amt, held)
          const rest = held - take
          delta = rest - (amt - take)
          this.settleRecord(key, rec, cust, rest, take)
          const debit = Number(rec.debit)
          outcome = cleared < debit ? 'cleared_partial' : cleared > debit ? 'cleared_over' : 'cleared'
        }
        this.states.set(key, { ...st, cl: cleared, at: rec.decidedAtMs })
      }
    } else if (p.type === 'reversal') {
      outcome = 'reversal'
      const key = this.s.keys.decision(p.urn, p.reference)
      const rec = ofCard(this.s.getRecord(key), p.last4)
      // what it still holds is released; beyond it, money back only for what was posted
      let rel = 0
      let credit = amt
      if (rec?.code === '00') {
        rel = Math.min(Number(rec.held), amt)
        if (rel > 0) this.settleRecord(key, rec, cust, rel, 0)
        credit = this.stateOf(key).cl > 0 ? amt - rel : 0
      }
      delta = rel + credit
    } else if (p.type === 'refund' || p.type === 'adjustment') {
      outcome = p.type; delta = amt
    } else if (p.type === 'fee') {
      outcome = 'fee'; delta = -amt
    } else if (lifecycle?.failed !== undefined) {
      const f = lifecycle.failed
      const lf = this.exceptions.get(f.exceptionId)
      const d = amt - movedForFailed(f, lf?.resolution)
      outcome = d === 0 ? 'lifecycle_matched' : 'lifecycle_mismatch'
      if (d !== 0) except('lifecycle_mismatch', '', amt, d * f.sign > 0 ? 'credit' : 'debit', Math.abs(d), lifecycle.detail)
      if (lf !== undefined && lf.status === 'open') {
        lf.status = 'resolved'
        lf.resolution = { action: 'accept', amount: '0', reason: settledReason(statementId, p.platformId, d === 0 ? null : pkey), keyId: '', atMs: now }
        this.s.emit(lf.urn, 'reconciliation.resolved', structuredClone(lf) as unknown as Record<string, unknown>)
      }
    } else if (lifecycle?.matched === true) {
      outcome = 'lifecycle_matched'
    } else {
      outcome = 'lifecycle_mismatch'
      const d = lifecycle?.acceptDelta ?? 0
      except('lifecycle_mismatch', '', amt, d > 0 ? 'credit' : d < 0 ? 'debit' : 'none', Math.abs(d), lifecycle?.detail ?? '')
    }
    let available: number | null = null
    if (cust !== undefined) {
      cust.available += delta
      available = cust.available
      if (available < 0) except('negative_balance', '~nb', -available, 'none', 0, `available below zero after ${outcome}`)
    }
    this.postings.set(pkey, { value: { f: fingerprint, o: outcome, s: statementId, x: exceptions }, expiresAtMs: now + POSTING_RETENTION_MS })
    this.s.emit(p.urn, 'settlement.posted', {
      platformId: p.platformId, statementId, postingType: p.type, outcome, reference: p.reference, amount: String(amt),
      postedAt: p.postedAt, available: available === null ? '' : String(available), held: String(cust?.held ?? 0)
    })
    return { status: 'applied', outcome, statementId, exceptions, available }
  }

  async dueBuckets (asOfMs: number): Promise<number[]> {
    const due = new Set<number>()
    for (const h of this.store.holds.due(asOfMs, Number.MAX_SAFE_INTEGER)) due.add(bucketOf(unpart(h.member.slice(0, h.member.indexOf(':')))))
    return [...due]
  }

  async expireBucket (_bucket: number, asOfMs: number, max: number): Promise<{ expired: number, more: boolean }> {
    // one index for every bucket here: what is due, whichever bucket
    const due = this.store.holds.due(asOfMs, max)
    let expired = 0
    for (const h of due) {
      const [urnp, refp, l4p] = h.member.split(':') as [string, string, string]
      const urn = unpart(urnp)
      const key = this.s.keys.decision(urn, unpart(refp))
      const found = this.s.getRecord(key)
      // the decision under the member's key may be another one than the member's (HoldIndex.decidedAtOf): an
      // approval of the same card, decided when the member's was
      const rec = found !== undefined && found.code === '00' && this.store.holdMember(key, found.last4) === h.member &&
        found.decidedAtMs === this.store.holds.decidedAtOf(h.member)
        ? found
        : undefined
      const cust = this.s.customers.get(urn)
      if (rec !== undefined && cust !== undefined) {
        const held = Number(rec.held)
        this.settleRecord(key, rec, cust, held, 0)
        cust.available += held
        this.states.set(key, { ...this.stateOf(key), ex: asOfMs, at: rec.decidedAtMs })
        this.s.emit(urn, 'authorization.expired', { reference: rec.reference, last4: rec.last4, released: String(held), available: String(cust.available), held: String(cust.held) })
        expired++
      } else if (cust !== undefined && this.store.holds.amountOf(h.member) > 0) {
        // its decision is gone (no expiry ran for as long as it is kept past the expiry), or the key holds another
        // decision: what the index says this hold holds goes back all the same, and nothing of the other
        const amt = this.store.holds.amountOf(h.member)
        cust.held -= amt
        cust.available += amt
        this.s.emit(urn, 'authorization.expired', { reference: unpart(refp), last4: unpart(l4p), released: String(amt), available: String(cust.available), held: String(cust.held) })
        expired++
      }
      this.store.holds.remove(h.member)
    }
    return { expired, more: due.length === max }
  }

  async getException (id: string): Promise<ReconException | null> {
    const x = this.exceptions.get(id)
    return x === undefined ? null : structuredClone(x)
  }

  async listExceptions (filter: ExceptionFilter): Promise<{ items: ReconException[], nextCursor: string | null }> {
    return pageOf([...this.exceptions.values()].map((x) => structuredClone(x)), filter)
  }

  async markResolved (id: string, r: { action: ResolveAction, amount: string, reason: string, keyId: string }, audit?: AuditContext): Promise<{ replayed: boolean, exception: ReconException }> {
    const x = this.exceptions.get(id)
    if (x === undefined || bucketOfException(id) === null) throw apiError('EXCEPTION_NOT_FOUND', `no exception ${id}`)
    if (x.resolution !== undefined) {
      if (x.resolution.action === r.action && x.resolution.amount === r.amount) return { replayed: true, exception: structuredClone(x) }
      throw apiError('ALREADY_RESOLVED', `exception ${id} was resolved with ${x.resolution.action}`)
    }
    x.status = 'resolved'
    x.resolution = { ...r, atMs: this.s.clock() }
    this.s.emit(x.urn, 'reconciliation.resolved', structuredClone(x) as unknown as Record<string, unknown>)
    this.s.audit(audit, { status: 'open' }, { status: 'resolved', action: r.action, amount: r.amount })
    return { replayed: false, exception: structuredClone(x) }
  }

  async decisionSettlement (urn: string, reference: string): Promise<DecisionSettlement> {
    const st = this.stateOf(this.s.keys.decision(urn, reference))
    return { cleared: st.cl, expiredAtMs: st.ex ?? null }
  }

  async notPosted (urn: string, reference: string, statementId: string): Promise<{ id: string, amount: number } | null> {
    const key = this.s.keys.decision(urn, reference)
    const rec = this.s.getRecord(key)
    if (rec === undefined || rec.code !== '00' || Number(rec.held) <= 0) return null
    if (this.store.holds.has(this.store.holdMember(key, rec.last4)) || this.stateOf(key).cl > 0) return null
    const id = `b${bucketOf(urn)}~anp~${key.slice(key.indexOf('}:d:') + 4)}`
    if (this.exceptions.has(id)) return null
    const x: ReconException = {
      id, kind: 'approved_not_posted', status: 'open', urn, reference, last4: rec.last4, platformId: '', statementId, postingType: '',
      outcome: 'approved_not_posted', amount: rec.held, accept: { action: 'release', amount: rec.held },
      detail: 'approved here, on no statement of a complete period', createdAtMs: this.s.clock()
    }
    this.exceptions.set(id, x)
    this.s.emit(urn, 'reconciliation.exception', { ...x })
    return { id, amount: Number(rec.held) }
  }

  async openException (n: NewException): Promise<{ id: string, opened: boolean }> {
    const id = `b${bucketOf(n.urn)}~${n.key}`
    if (this.exceptions.has(id)) return { id, opened: false }
    const x: ReconException = {
      id, kind: n.kind, status: 'open', urn: n.urn, reference: n.reference, last4: n.last4, platformId: '', statementId: '', postingType: n.postingType,
      outcome: n.outcome, amount: String(n.amount), accept: { action: n.accept.action, amount: String(n.accept.amount) }, detail: n.detail, createdAtMs: this.s.clock()
    }
    this.exceptions.set(id, x)
    this.s.emit(n.urn, 'reconciliation.exception', { ...x })
    return { id, opened: true }
  }

  async putStatement (report: StatementReport): Promise<void> {
    this.statements.set(report.id, structuredClone(report))
  }

  async getStatement (id: string): Promise<StatementReport | null> {
    const r = this.statements.get(id)
    return r === undefined ? null : structuredClone(r)
  }
}

/**
 * What a FAILED record has moved here in its line's direction: what it holds (an out line), less what a
 * resolution of its lifecycle_failed exception gave back, plus what one took (the other way round for an in
 * line). The Redis step computes the same.
 */
export function movedForFailed (f: NonNullable<LifecycleVerdict['failed']>, r: ReconException['resolution']): number {
  let moved = f.held
  if (r !== undefined) {
    const amt = r.amount === '' ? 0 : Number(r.amount)
    if (r.action === 'release' || r.action === 'credit') moved += f.sign * amt
    else if (r.action === 'debit') moved -= f.sign * amt
  }
  return moved
}

/** The decision a line that names a card (`last4`, '' for none) matches: only one of that card. */
function ofCard (rec: StoredRecord | undefined, last4: string): StoredRecord | undefined {
  return rec !== undefined && (last4 === '' || rec.last4 === last4) ? rec : undefined
}

/** the resolution's reason when a statement's line settles a lifecycle_failed exception (the Redis step writes the same) */
export function settledReason (statementId: string, platformId: string, differenceId: string | null): string {
  return `settled by statement ${statementId}, platformId ${platformId}` + (differenceId === null ? '' : `; the difference is exception ${differenceId}`)
}

/** a platform_id_conflict exception's detail (the Redis script writes the same) */
export function conflictDetail (firstStatement: string, firstOutcome: string): string {
  return `platformId applied by statement ${firstStatement} (${firstOutcome}) with other content; this line is not applied`
}

/** what makes two lines with one platformId the same posting */
export function postingFingerprint (p: Posting): string {
  return `${p.type}|${p.reference}|${p.urn}|${p.last4}|${p.amount}`
}
