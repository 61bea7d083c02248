// Stand-in (docs/operations/standin.md): while the store cannot be reached, this instance decides by the
// policy's caps instead of answering 05; each approval is journaled and flushed before it is answered, and
// replayed into the store, oldest first and each reference once, as soon as the store answers again.
//
// Entered per decision, on the evidence that already answers 05 for an unreachable store: a store call that
// surely did not run (ERR_STORE_NOT_DONE: not connected, failing over, refused before it ran). A call whose
// outcome is unknown (sent, no answer) stays 05 and compensated; a slow store is the deadline's business.
// Left as soon as a store call succeeds.
import type { Logger } from 'pino'
import { isStoreNotDone } from '../errors.js'
import type { RuleHit } from '../domain/rule-hits.js'
import type { AuthorizeInput, Store } from '../store/types.js'
import { StandInCaps, type CapRefusal } from './caps.js'
import { byAge, entryId, type Adopted, type StandInEntry, type StandInJournal } from './journal.js'
import { refusalOf, type PolicyRefusal, type StandInPolicy } from './policy.js'
import { REPLAY_OUTCOMES, type ReplayOutcome, type StandInMetrics } from './metrics.js'
import type { NegativeBalance, NegativeBalanceHook, NegativeBalanceQueue, UnconfirmedQueue } from './negative-balance.js'
import { DECISION_RETENTION_MS_MIN } from '../store/types.js'

/**
 * How long the store surely remembers a replayed approval's decision: DECISION_RETENTION_DAYS is never less
 * than 7 and runs from the replay, which comes after the approval; a day less, for instances' clocks apart, a
 * replay sent just before the horizon and landing after it, and an earlier decision of the reference the
 * platform repeated into stand-in. An entry older than this is not replayed: an earlier replay whose answer was
 * lost, or an earlier process's, may have been debited and forgotten since, and a replay now would debit it
 * again. It goes to the exception queue (standin_unconfirmed).
 */
export const STANDIN_REPLAY_HORIZON_MS = DECISION_RETENTION_MS_MIN - 24 * 3600_000

/** What a stand-in decision came to: 00, the rule's decline, or 05 for the policy check or cap named. */
export interface StandInResult {
  code: string
  reason: 'approved' | 'rule' | 'standin_declined' | 'conflict'
  ruleId: string | null
  /** a repeat of a reference decided in stand-in, answered from the journal */
  replayed: boolean
  /** for a stand-in decline: the policy check or cap; 'deadline': the deadline had answered 05 already */
  check?: PolicyRefusal | CapRefusal | 'journal' | 'deadline'
}

/** What a decision's deadline guard offers the stand-in (src/decision/deadline.ts, AbortHook). */
export interface StandInAbort {
  /** the deadline has answered 05 */
  readonly aborted: boolean
  /** the guard has let go of the request: the deadline answered (aborted), or the decision's answer is sent */
  readonly done: boolean
  onAbort: (fn: (() => void) | null) => void
}

interface Pending {
  entry: StandInEntry
  card: string
  /** resolves true once flushed; false when the write failed */
  durable: Promise<boolean>
  flushed: boolean
  voided: boolean
  /**
   * The request's guard while its answer may still be the deadline's 05 (null: its 00 has been sent, or the
   * entry was adopted from a process that is gone). The replay never takes an entry before this is null.
   */
  guard: StandInAbort | null
  /** replayed below zero, not yet taken by the exception queue: the next pass hands it over again */
  owed?: NegativeBalance
  /** past the replay's horizon: handed to the exception queue instead of replayed, until it takes it */
  unconfirmed?: boolean
}

export interface Forced { on: boolean, reason: string, atMs: number, keyId: string | null }

export interface StandInStatus {
  state: 'standby' | 'active' | 'replaying'
  /** when this outage's first stand-in decision was made (null: none open) */
  sinceMs: number | null
  forced: Forced | null
  /** this outage's stand-in decisions on this instance */
  decisions: { approved: number, declined: number, byCode: Record<string, number> }
  /** this outage's approved amount, minor units */
  amount: string
  replayBacklog: { count: number, amount: string }
  /** replays since start, by outcome */
  replayed: Record<ReplayOutcome, number>
}

export interface StandInOptions {
  policy: StandInPolicy
  journal: StandInJournal
  store: Store
  log: Logger
  metrics: StandInMetrics
  clock?: () => number
  /** how often the replay looks for a store that answers, while there is a backlog */
  replayEveryMs?: number
  /** a replay left the balance below zero: told once (the log line) */
  onNegativeBalance?: NegativeBalanceHook
  /** and handed to the settlement's exception queue, until it takes it */
  queueNegativeBalance?: NegativeBalanceQueue
  /** an entry past the replay's horizon (STANDIN_REPLAY_HORIZON_MS), for the exception queue, until it takes it */
  queueUnconfirmed?: UnconfirmedQueue
}

export class StandIn {
  readonly policy: StandInPolicy
  private readonly caps: StandInCaps
  private readonly pending = new Map<string, Pending>()
  private readonly clock: () => number
  private forcedState: Forced | null = null
  /** the last store call did not run: the store cannot be reached */
  private unreachable = false
  private sinceMs: number | null = null
  private byCode: Record<string, number> = {}
  private readonly replayedBy = Object.fromEntries(REPLAY_OUTCOMES.map((o) => [o, 0])) as Record<ReplayOutcome, number>
  private seq = 0
  private ticks = 0
  private replaying: Promise<void> | null = null
  private timer: NodeJS.Timeout | null = null
  private stopped = false

  constructor (private readonly opts: StandInOptions) {
    this.policy = opts.policy
    this.caps = new StandInCaps(opts.policy)
    this.clock = opts.clock ?? Date.now
  }

  /** Takes over what earlier processes journaled and never replayed, and starts the replay's timer. */
  start (): number {
    const n = this.adopt()
    if (this.timer === null) {
      this.timer = setInterval(() => { this.tick() }, this.opts.replayEveryMs ?? 250)
      this.timer.unref()
    }
    return n
  }

  private adopt (): number {
    let found: Adopted
    try {
      found = this.opts.journal.adopt()
    } catch (err) {
      this.opts.log.error({ err: (err as Error).message }, 'stand-in journals of earlier processes could not be read')
      return 0
    }
    let n = 0
    for (const entry of found.owed) {
      if (this.pending.has(entry.id)) continue
      const card = StandInCaps.cardOf(entry.input.urn, entry.input.last4)
      // approvals of this outage count in its caps until the outage is over, replayed or not
      this.caps.count(card, entry.input.debitAmount)
      this.sinceMs ??= entry.atMs
      // its process is gone: its request was answered 00, or never answered (died between flush and answer). A
      // deadline's 05 never leaves before the void line is flushed (voidEntry runs first), so none of these was
      // answered 05
      this.pending.set(entry.id, { entry, card, durable: Promise.resolve(true), flushed: true, voided: false, guard: null })
      n++
    }
    // replayed before the earlier process ended, in an outage that is not over: still in its caps
    let replayed = 0
    for (const entry of found.replayed) {
      if (this.pending.has(entry.id)) continue
      this.caps.count(StandInCaps.cardOf(entry.input.urn, entry.input.last4), entry.input.debitAmount)
      this.sinceMs ??= entry.atMs
      replayed++
    }
    if (n > 0 || replayed > 0) this.opts.log.warn({ entries: n, replayed }, 'stand-in approvals left by an earlier process: replaying them into the store')
    this.gauges()
    return n
  }

  private tick (): void {
    if (this.stopped) return
    if (this.pending.size === 0 && this.unreachable && this.forcedState?.on !== true && this.opts.store.ready()) {
      // no decision has come to show the store answers again (an idle instance): ask it
      this.opts.store.ping().then(() => { this.storeAnswered() }, () => {})
    }
    if (this.pending.size === 0) {
      // a sibling on this host that died leaves its journal to us
      if (++this.ticks % 20 === 0) this.adopt()
      this.closeOutageIfOver()
      return
    }
    if (this.forcedState?.on === true || !this.opts.store.ready()) return
    this.replayNow().catch(() => {})
  }

  get forced (): Forced | null {
    return this.forcedState
  }

  /** forced on by an operator: every decision is made in stand-in, the store is not asked */
  get forcedOn (): boolean {
    return this.forcedState?.on === true
  }

  /** whether this instance can decide when the store cannot (readiness): not forced off */
  get canDecide (): boolean {
    return this.forcedState?.on !== false
  }

  get active (): boolean {
    return this.forcedOn || (this.unreachable && this.forcedState?.on !== false)
  }

  /** Whether a failed store call makes this decision a stand-in one. */
  takes (err: unknown): boolean {
    if (this.forcedState?.on === false || !isStoreNotDone(err)) return false
    if (!this.unreachable) this.opts.log.warn({ err: (err as Error).message }, 'stand-in: the store cannot be reached; deciding by the stand-in policy')
    this.unreachable = true
    this.gauges()
    return true
  }

  /** A store call succeeded: the store can be reached again. */
  storeAnswered (): void {
    if (!this.unreachable) return
    this.unreachable = false
    this.opts.log.warn({ backlog: this.pending.size }, 'stand-in: the store answers again; replaying the stand-in approvals')
    this.gauges()
    if (this.pending.size > 0 && this.forcedState?.on !== true) this.replayNow().catch(() => {})
  }

  /** Forces stand-in on or off on this instance (null: back to the store's evidence). */
  force (on: boolean | null, reason: string, keyId: string | null): { before: Forced | null, after: Forced | null } {
    const before = this.forcedState
    this.forcedState = on === null ? null : { on, reason, atMs: this.clock(), keyId }
    if (on === true) this.sinceMs ??= this.clock()
    this.gauges()
    return { before, after: this.forcedState }
  }

  /**
   * A repeat of a reference this instance decided in stand-in and has not replayed yet: answered from the
   * journal (once the first is flushed), with nothing more counted. null: not one.
   */
  prior (input: AuthorizeInput): Promise<StandInResult> | null {
    const p = this.pending.get(entryId(input.urn, input.reference))
    if (p === undefined) return null
    if (p.entry.input.fingerprint !== input.fingerprint) return Promise.resolve({ code: '05', reason: 'conflict', ruleId: null, replayed: false })
    return p.durable.then((ok) => ok && !p.voided
      ? { code: '00', reason: 'approved' as const, ruleId: null, replayed: true }
      : { code: '05', reason: 'standin_declined' as const, ruleId: null, replayed: true, check: 'journal' as const })
  }

  /**
   * Decides in stand-in: the rules' decline (rules that need no store have run), then the policy's checks
   * and caps; an approval is journaled and flushed before this resolves. `abort` is the request's deadline
   * guard: an approval it answers 05 first is voided (never replayed) and its caps given back; the replay takes
   * an approval only once the guard has let go of it with its 00 (`replayable`), so the two never meet.
   */
  async decide (input: AuthorizeInput, decline: RuleHit | null, mcc: string, abort: StandInAbort): Promise<StandInResult> {
    // the deadline has answered 05 already (the store refused the call only after it): nothing to approve, and
    // an entry journaled now would have no guard left to void it
    if (abort.aborted) return { code: '05', reason: 'standin_declined', ruleId: null, replayed: false, check: 'deadline' }
    // A request of the same reference that came in at once passed `prior` too, before the store failed both:
    // the later one is that one's repeat. Two entries of one id would share its void and its replay, so a
    // deadline's void of one would void the other's answered approval, and another amount would be approved twice.
    const twin = this.prior(input)
    if (twin !== null) return await twin
    const now = this.clock()
    this.sinceMs ??= now
    this.gauges()
    if (decline !== null) return this.count({ code: decline.code, reason: 'rule', ruleId: decline.ruleId, replayed: false })
    const refused = refusalOf(this.policy, input.meta.channel, mcc, input.debitAmount)
    if (refused !== null) return this.declined(refused)
    const card = StandInCaps.cardOf(input.urn, input.last4)
    const capped = this.caps.reserve(card, input.debitAmount)
    if (capped !== null) return this.declined(capped)

    const entry: StandInEntry = {
      id: entryId(input.urn, input.reference),
      seq: ++this.seq,
      atMs: input.nowMs,
      input: { ...input, decline: null, meta: { ...input.meta, standIn: true }, standIn: true }
    }
    const p: Pending = { entry, card, durable: Promise.resolve(false), flushed: false, voided: false, guard: abort }
    p.durable = this.opts.journal.append(entry).then(() => { p.flushed = true; return true }, (err: unknown) => {
      this.opts.log.error({ urn: input.urn, reference: input.reference, err: (err as Error).message }, 'stand-in journal not written; answered 05')
      this.opts.metrics.journalFailures.inc()
      this.drop(p)
      return false
    })
    this.pending.set(entry.id, p)
    this.gauges()
    // kept until the guard lets go of the request: an abort before then means it answered 05 without us
    abort.onAbort(() => { this.voidEntry(p) })
    const ok = await p.durable
    if (!ok) return this.declined('journal')
    if (p.voided) return { code: '05', reason: 'standin_declined', ruleId: null, replayed: false, check: 'journal' }
    this.opts.metrics.approvedAmount.inc(input.debitAmount)
    return this.count({ code: '00', reason: 'approved', ruleId: null, replayed: false })
  }

  private declined (check: PolicyRefusal | CapRefusal | 'journal'): StandInResult {
    return this.count({ code: '05', reason: 'standin_declined', ruleId: null, replayed: false, check })
  }

  private count (r: StandInResult): StandInResult {
    this.byCode[r.code] = (this.byCode[r.code] ?? 0) + 1
    this.opts.metrics.decisions.inc({ code: r.code, reason: r.reason === 'standin_declined' ? (r.check ?? 'policy') : r.reason })
    return r
  }

  /** The deadline answered 05 before the approval was: never replayed, its caps given back. */
  private voidEntry (p: Pending): void {
    if (p.voided) return
    p.voided = true
    try {
      this.opts.journal.void(p.entry)
    } catch (err) {
      // the entry may be replayed though its request was answered 05: say so, naming it
      this.opts.log.error({ urn: p.entry.input.urn, reference: p.entry.input.reference, err: (err as Error).message }, 'stand-in journal: void not written; reverse this decision if it is replayed')
    }
    this.drop(p)
  }

  private drop (p: Pending): void {
    if (this.pending.get(p.entry.id) === p) this.pending.delete(p.entry.id)
    this.caps.release(p.card, p.entry.input.debitAmount)
    this.gauges()
  }

  /** Replays the backlog into the store, oldest first, until it is empty or the store fails a call. */
  async replayNow (): Promise<void> {
    this.replaying ??= this.replay().finally(() => { this.replaying = null })
    await this.replaying
  }

  /**
   * Whether the replay may take the entry: flushed, not voided, and its 00 sent (its guard let go without the
   * deadline) or its process gone. An entry whose request is still under its guard waits for the next pass: its
   * deadline may yet answer 05 and void it, and a debit made before that would stay behind the 05.
   */
  private replayable (p: Pending): boolean {
    if (!p.flushed || p.voided) return false
    if (p.guard !== null) {
      if (!p.guard.done || p.guard.aborted) return false
      p.guard = null
    }
    return true
  }

  private async replay (): Promise<void> {
    const batch = [...this.pending.values()].filter((p) => this.replayable(p))
      .sort((x, y) => byAge(x.entry, y.entry))
    for (const p of batch) {
      if (this.stopped || p.voided) return
      const { input } = p.entry
      if (p.owed !== undefined) {
        // replayed before; only its exception is still owed
        if (!await this.queueOwed(p)) return
        this.finish(p)
        continue
      }
      if (p.unconfirmed === true || this.clock() - p.entry.atMs >= STANDIN_REPLAY_HORIZON_MS) {
        if (!await this.handOverUnconfirmed(p)) return
        this.finish(p)
        continue
      }
      let result
      try {
        result = await this.opts.store.authorize(input)
      } catch (err) {
        // the store is gone again, or its answer was lost: the same call again later is answered once
        if (!isStoreNotDone(err)) this.opts.log.warn({ urn: input.urn, reference: input.reference, err: (err as Error).message }, 'stand-in replay: store outcome unknown; sending it again later')
        if (isStoreNotDone(err)) this.unreachable = true
        this.gauges()
        return
      }
      if (this.unreachable) {
        this.unreachable = false
        this.opts.log.warn({ backlog: this.pending.size }, 'stand-in: the store answers again; replaying the stand-in approvals')
      }
      const outcome: ReplayOutcome = result.reason === 'conflict'
        ? 'conflict'
        : !result.replayed
            ? (result.available === null ? 'unknown_urn' : 'applied')
            : (result.code === '00' ? 'existing' : 'existing_decline')
      this.replayedBy[outcome]++
      this.opts.metrics.replayed.inc({ outcome })
      if (outcome === 'conflict') {
        this.opts.log.error({ urn: input.urn, reference: input.reference, debit: String(input.debitAmount) },
          'stand-in replay: the store holds this reference for another amount or card; the stand-in approval was not debited')
      } else if (outcome === 'existing_decline') {
        this.opts.log.error({ urn: input.urn, reference: input.reference, storeCode: result.code, storeReason: result.reason, debit: String(input.debitAmount) },
          'stand-in replay: the store holds another answer for this reference; the stand-in approval was not debited')
      } else if (outcome === 'unknown_urn') {
        this.opts.log.error({ urn: input.urn, reference: input.reference, debit: String(input.debitAmount) }, 'stand-in replay: unknown customer; recorded, nothing debited')
      } else if (outcome === 'applied' && result.available !== null && result.available < 0) {
        if (!await this.owe(p, result.available)) return
      } else if (outcome === 'existing') {
        // the store holds a 00 for this reference: an earlier replay of this approval whose answer was lost
        // (or whose process stopped before its exception was handed over) may have left the balance below zero
        let below: number | null
        try {
          below = await this.belowZeroAfterEarlierReplay(input)
        } catch (err) {
          this.opts.log.warn({ urn: input.urn, reference: input.reference, err: (err as Error).message }, 'stand-in replay: the balance after an earlier replay could not be read; looking again later')
          this.gauges()
          return
        }
        if (below !== null && !await this.owe(p, below)) return
      }
      this.finish(p)
    }
    this.closeOutageIfOver()
  }

  /** A replay left the balance below zero: counted, told, and handed to the exception queue; false as queueOwed. */
  private async owe (p: Pending, available: number): Promise<boolean> {
    const { input } = p.entry
    this.opts.metrics.negativeBalances.inc()
    p.owed = { urn: input.urn, reference: input.reference, last4: input.last4, debit: input.debitAmount, available }
    this.opts.onNegativeBalance?.(p.owed)
    return await this.queueOwed(p)
  }

  /**
   * The customer's balance when it is below zero and the decision the store holds for this reference is this
   * approval's replay (a stand-in 00 of the same amount and card), else null. Such a replay was applied before
   * without its answer reaching here, so whether it left the balance below zero was never seen: the balance as
   * it is now is what an operator settles (the queue keeps one exception a customer and reference). A replay is
   * answered 'existing' only for the same amount and card (else 'conflict').
   */
  private async belowZeroAfterEarlierReplay (input: AuthorizeInput): Promise<number | null> {
    const rec = await this.opts.store.getDecision(input.urn, input.reference)
    if (rec === null || rec.code !== '00' || rec.meta?.standIn !== true) return null
    const customer = await this.opts.store.getCustomer(input.urn)
    return customer !== null && customer.available < 0 ? customer.available : null
  }

  /** Hands a replay's negative balance to the exception queue; false (the entry stays owed) when it failed. */
  private async queueOwed (p: Pending): Promise<boolean> {
    const nb = p.owed
    const queue = this.opts.queueNegativeBalance
    return await this.handOver(p, 'negative_balance', nb === undefined || queue === undefined ? undefined : async () => { await queue(nb) })
  }

  /**
   * An entry past the replay's horizon: not replayed (an earlier replay may have been debited, and forgotten by
   * now), but counted, logged and handed to the exception queue; false (the entry stays) when the queue failed.
   */
  private async handOverUnconfirmed (p: Pending): Promise<boolean> {
    const { input, atMs } = p.entry
    if (p.unconfirmed !== true) {
      p.unconfirmed = true
      this.replayedBy.unconfirmed++
      this.opts.metrics.replayed.inc({ outcome: 'unconfirmed' })
      this.opts.log.error({ urn: input.urn, reference: input.reference, debit: String(input.debitAmount), approvedAt: new Date(atMs).toISOString() },
        'stand-in replay: approval older than the store surely keeps a decision; not replayed (it may have been debited already): standin_unconfirmed exception')
    }
    const queue = this.opts.queueUnconfirmed
    const send = queue === undefined ? undefined : async (): Promise<void> => { await queue({ urn: input.urn, reference: input.reference, last4: input.last4, debit: input.debitAmount, atMs }) }
    return await this.handOver(p, 'standin_unconfirmed', send)
  }

  /**
   * Hands the entry's exception to the queue (nothing to hand: done); false when the queue failed: the entry is
   * not done, and the next replay pass hands it over again. The stand-in's state is not changed: decisions find
   * out for themselves whether the store answers.
   */
  private async handOver (p: Pending, kind: string, send: (() => Promise<void>) | undefined): Promise<boolean> {
    if (send === undefined) return true
    try {
      await send()
      return true
    } catch (err) {
      const { urn, reference } = p.entry.input
      this.opts.log.warn({ urn, reference, err: (err as Error).message }, `stand-in replay: ${kind} exception not queued; trying again`)
      this.gauges()
      return false
    }
  }

  /** The entry is replayed (and its exception queued): done in the journal and in the backlog. */
  private finish (p: Pending): void {
    try {
      this.opts.journal.done(p.entry.id)
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'stand-in journal not updated; the next start replays it again (answered from the store, harmless)')
    }
    if (this.pending.get(p.entry.id) === p) this.pending.delete(p.entry.id)
    this.gauges()
  }

  /** The outage is over once the store answers and every approval is replayed: the caps start again. */
  private closeOutageIfOver (): void {
    if (this.sinceMs === null || this.active || this.pending.size > 0) return
    try {
      this.opts.journal.endOutage()
    } catch (err) {
      // a file left whole counts its replayed entries in a later outage's caps: safe, and tried again next time
      this.opts.log.warn({ err: (err as Error).message }, 'stand-in journal not emptied at the outage\'s end')
      return
    }
    this.caps.reset()
    this.sinceMs = null
    this.byCode = {}
    this.opts.log.info('stand-in: store answering and every stand-in approval replayed; caps reset')
    this.gauges()
  }

  private gauges (): void {
    const m = this.opts.metrics
    m.active.set(this.active ? 1 : 0)
    m.forced.set(this.forcedState === null ? 0 : this.forcedState.on ? 1 : -1)
    let amount = 0
    for (const p of this.pending.values()) amount += p.entry.input.debitAmount
    m.replayBacklog.set(this.pending.size)
    m.replayBacklogAmount.set(amount)
  }

  status (): StandInStatus {
    let amount = 0
    for (const p of this.pending.values()) amount += p.entry.input.debitAmount
    const approved = this.byCode['00'] ?? 0
    const all = Object.values(this.byCode).reduce((a, b) => a + b, 0)
    return {
      state: this.active ? 'active' : this.pending.size > 0 ? 'replaying' : 'standby',
      sinceMs: this.sinceMs,
      forced: this.forcedState,
      decisions: { approved, declined: all - approved, byCode: { ...this.byCode } },
      amount: String(this.caps.used.amount),
      replayBacklog: { count: this.pending.size, amount: String(amount) },
      replayed: { ...this.replayedBy }
    }
  }

  /** Stops the timer; a replay under way finishes its current call. What is left stays in the journal. */
  async stop (): Promise<void> {
    this.stopped = true
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
    await this.replaying
    this.opts.journal.close()
  }
}
