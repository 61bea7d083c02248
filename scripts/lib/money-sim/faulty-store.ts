// The store as one simulated process sees it: every call waits its turn in the scheduler, may fail before it
// is sent, lose its reply after it committed, or reply later than the decision's deadline; every call that
// reaches the real store is applied to the model at that instant and both answers are compared. In a store
// outage (the store-outage operation) every call fails before it is sent, as a Redis that is not connected does.
import { ERR_STORE_NOT_DONE, ERR_STORE_OUTCOME_UNKNOWN, StoreRejection } from '../../../src/errors.js'
import type { ControlEntries } from '../../../src/domain/controls.js'
import type { AuditContext, AuditRecord } from '../../../src/domain/audit.js'
import type {
  AbandonInput, AbandonOutcome, AuthorizeInput, AuthorizeResult, CardStatus, Customer, CustomerStatus, DecisionRecord,
  LifecycleKind, LifecycleRef, MoneyEvent, MoneyOpResult, ReversalResult, Store
} from '../../../src/store/types.js'
import { refKey, type ProcessHandle, type SimContext } from './context.js'
import { canonControls, type Expect, type ModelAuth } from './model.js'
import type { ReplayOutcomeSeen } from './stand-in.js'

/** What the store throws when a command could not be sent: it surely did nothing. */
export function notSentError (): Error {
  return new ERR_STORE_NOT_DONE('redis is reconnecting')
}

/** A reply that never came back: the command may have run. */
export function lostReplyError (): Error {
  return new ERR_STORE_OUTCOME_UNKNOWN('Connection is closed.')
}

type Outcome<T> = { ok: true, value: T } | { ok: false, error: unknown }

async function settle<T> (p: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await p() }
  } catch (error) {
    return { ok: false, error }
  }
}

function errorCode (err: unknown): string {
  if (err instanceof StoreRejection) return err.word
  return `thrown: ${(err as Error | null | undefined)?.message ?? String(err)}`
}

const STORE_FAULTS = ['store-not-sent', 'store-lost-reply'] as const
/** Writes of card-lifecycle records: kinds of their own, so a run can leave them out alone. */
const RECORD_FAULTS = ['record-not-sent', 'record-lost-reply'] as const
const AUTHORIZE_FAULTS = ['store-not-sent', 'store-lost-reply', 'store-slow', 'store-late'] as const
/** A repeat of a reference already decided: failing before it is sent is a fault kind of its own. */
const REPEAT_FAULTS = ['store-not-sent-repeat', 'store-lost-reply', 'store-slow', 'store-late'] as const

export class FaultyStore implements Store {
  readonly kind: 'memory' | 'redis'

  constructor (private readonly sim: SimContext, private readonly proc: ProcessHandle) {
    this.kind = sim.store.kind
  }

  /**
   * Queues one call. `real` runs it on the store (late: past the deadline on the store's clock), `check`
   * applies it to the model and compares; `faults` are the kinds this call can get.
   */
  private call<T> (label: string, args: unknown, real: (late: boolean) => Promise<T>, check: (out: Outcome<T>, late: boolean) => void,
    faults: readonly string[] | (() => readonly string[]), attempt?: string): Promise<T> {
    const sim = this.sim
    if (!this.proc.alive) return new Promise<T>(() => {})
    return new Promise<T>((resolve, reject) => {
      const execute = async (late: boolean): Promise<Outcome<T>> => {
        sim.counts.storeCalls++
        const out = await settle(async () => await real(late))
        check(out, late)
        if (sim.trace !== null) sim.trace.push(`${label} ${show(args)} -> ${summarize(out)}`)
        return out
      }
      sim.scheduler.add({
        owner: this.proc.id,
        label,
        run: async () => {
          if (sim.outage) {
            if (sim.standIn !== null) sim.standIn.figures.refused++
            sim.trace?.push(`${label} ${show(args)} refused: the store is unreachable`)
            reject(notSentError())
            return
          }
          const fault = sim.fault((typeof faults === 'function' ? faults() : faults) as never)
          if (fault !== null) sim.trace?.push(`${label} ${show(args)} fault ${fault as string}`)
          if (fault === 'store-not-sent' || fault === 'store-not-sent-repeat' || fault === 'record-not-sent') { reject(notSentError()); return }
          const late = fault === 'store-late'
          // the reply comes after the deadline: the route's guard answers 05 and aborts first
          if ((fault === 'store-slow' || late) && attempt !== undefined) sim.attempts.get(attempt)?.fireGuard()
          const out = await execute(late)
          if (fault === 'store-lost-reply' || fault === 'record-lost-reply') { reject(lostReplyError()); return }
          if (out.ok) resolve(out.value)
          else reject(out.error)
        },
        orphan: async () => {
          const reached = sim.rnd() < 0.5 && !sim.outage
          sim.trace?.push(`${label} ${show(args)} from a dead process: ${reached ? 'reached the store' : 'never sent'}`)
          if (reached) await execute(false)
        }
      })
    })
  }

  private compare<T> (label: string, args: unknown, expected: Expect<T>, out: Outcome<unknown>, view: (v: never) => T): void {
    const sim = this.sim
    if ('err' in expected) {
      if (out.ok) {
        sim.violation('store-agrees-with-model', `${label} ${show(args)}: expected rejection ${expected.err}, store answered ${show(out.value)}`)
        return
      }
      const code = errorCode(out.error)
      // any refusal is right for bad input; otherwise the code must be the one the model names
      if (expected.err === 'INVALID' || code === expected.err) return
      sim.violation('store-agrees-with-model', `${label} ${show(args)}: expected rejection ${expected.err}, store said ${code}`)
      return
    }
    if (!out.ok) {
      sim.violation('store-agrees-with-model', `${label} ${show(args)}: expected ${JSON.stringify(expected.ok)}, store said ${errorCode(out.error)}`)
      return
    }
    const got = view(out.value as never)
    if (JSON.stringify(got) !== JSON.stringify(expected.ok)) {
      sim.violation('store-agrees-with-model', `${label} ${show(args)}: expected ${JSON.stringify(expected.ok)}, store answered ${show(got)}`)
    }
  }

  async authorize (input: AuthorizeInput): Promise<AuthorizeResult> {
    const sim = this.sim
    const args = { urn: input.urn, ref: input.reference, last4: input.last4, debit: input.debitAmount, attempt: input.attempt }
    if (input.standIn === true) return await this.replay(input, args)
    return await this.call('authorize', args, async (late) => {
      // the store's clock decides; the simulated one does not run inside a step
      const deadlineAtMs = late ? (sim.store.kind === 'memory' ? sim.storeNow() - 1 : 1) : sim.storeNow() + 3_600_000
      return await sim.store.authorize({ ...input, deadlineAtMs })
    }, (out, late) => {
      const info = sim.attempts.get(input.attempt)
      if (info === undefined) throw new Error(`authorize of an unknown attempt ${input.attempt}`)
      sim.touchedUrns.add(input.urn)
      sim.touchedRefs.add(refKey(input.urn, input.reference))
      this.compare('authorize', args, sim.model.authorize(info.auth, input.attempt, late), out,
        (r: AuthorizeResult) => ({ code: r.code, reason: r.reason, replayed: r.replayed }))
    }, () => sim.model.decision(input.urn, input.reference) === undefined ? AUTHORIZE_FAULTS : REPEAT_FAULTS, input.attempt)
  }

  /**
   * The replay of a stand-in approval (src/standin/stand-in.ts): the model records it as the 00 it was answered,
   * debited below zero if it must be, and the simulation's stand-in books note what it met. No deadline, so no
   * slow or late reply: a lost reply has the replay send it again.
   */
  private async replay (input: AuthorizeInput, args: unknown): Promise<AuthorizeResult> {
    const sim = this.sim
    const auth: ModelAuth = {
      urn: input.urn, reference: input.reference, last4: input.last4, debit: input.debitAmount, channel: input.meta.channel,
      mcc: input.meta.request?.mcc ?? '', nowMs: input.nowMs
    }
    return await this.call('replay', args, async () => await sim.store.authorize(input), (out) => {
      const key = refKey(input.urn, input.reference)
      sim.touchedUrns.add(input.urn)
      sim.touchedRefs.add(key)
      const d = sim.model.decision(input.urn, input.reference)
      const met: ReplayOutcomeSeen = d === undefined ? 'applied' : d.debit !== auth.debit || d.last4 !== auth.last4 ? 'conflict' : d.code === '00' ? 'existing' : 'existing_decline'
      this.compare('replay', args, sim.model.authorize(auth, input.attempt, false, true), out,
        (r: AuthorizeResult) => ({ code: r.code, reason: r.reason, replayed: r.replayed }))
      sim.standIn?.replayed(sim, key, input.attempt, met, input.urn)
    }, STORE_FAULTS)
  }

  async abandon (input: AbandonInput): Promise<AbandonOutcome> {
    const sim = this.sim
    const args = { urn: input.urn, ref: input.reference, attempt: input.attempt }
    return await this.call('abandon', args, async () => await sim.store.abandon(input), (out) => {
      const info = sim.attempts.get(input.attempt)
      sim.touchedUrns.add(input.urn)
      sim.touchedRefs.add(refKey(input.urn, input.reference))
      this.compare('abandon', args, sim.model.abandon(input.urn, input.reference, input.attempt, input.last4, info?.auth.debit ?? 0, input.arrivedAtMs, input.tombstone !== false), out, (r: AbandonOutcome) => r)
    }, STORE_FAULTS)
  }

  async putCustomer (urn: string, patch: { customerId?: string, status?: CustomerStatus }, audit?: AuditContext): Promise<Customer> {
    const sim = this.sim
    return await this.call('putCustomer', { urn, ...patch }, async () => await sim.store.putCustomer(urn, patch, audit), (out) => {
      sim.touchedUrns.add(urn)
      this.compare('putCustomer', { urn, ...patch }, sim.model.putCustomer(urn, patch.status), out, (c: Customer) => ({ status: c.status, available: c.available }))
    }, STORE_FAULTS)
  }

  async putCard (urn: string, last4: string, status: CardStatus, audit?: AuditContext): Promise<Customer> {
    const sim = this.sim
    return await this.call('putCard', { urn, last4, status }, async () => await sim.store.putCard(urn, last4, status, audit), (out) => {
      sim.touchedUrns.add(urn)
      this.compare('putCard', { urn, last4, status }, sim.model.putCard(urn, last4, status), out, (c: Customer) => ({ cards: sortKeys(c.cards) }))
    }, STORE_FAULTS)
  }

  async getCustomer (urn: string): Promise<Customer | null> {
    const sim = this.sim
    return await this.call('getCustomer', { urn }, async () => await sim.store.getCustomer(urn), (out) => {
      const m = sim.model.customers.get(urn)
      const expected = m === undefined ? null : { status: m.status, available: m.available, cards: sortKeys(Object.fromEntries(m.cards)) }
      this.compare('getCustomer', { urn }, { ok: expected }, out, (c: Customer | null) => c === null ? null : { status: c.status, available: c.available, cards: sortKeys(c.cards) })
    }, STORE_FAULTS)
  }

  private async money (kind: 'credit' | 'debit', urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    const sim = this.sim
    const args = { urn, amount, ref: reference }
    return await this.call(kind, args, async () => await sim.store[kind](urn, amount, reference, event, audit), (out) => {
      sim.touchedUrns.add(urn)
      this.compare(kind, args, sim.model.money(kind, urn, amount, reference), out, (r: MoneyOpResult) => ({ replayed: r.replayed, available: r.available }))
    }, STORE_FAULTS)
  }

  async credit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    return await this.money('credit', urn, amount, reference, event, audit)
  }

  async debit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    return await this.money('debit', urn, amount, reference, event, audit)
  }

  /** moves no money: the store's balance after it must be the model's */
  async recordCompletion (urn: string, reference: string, event: MoneyEvent): Promise<MoneyOpResult> {
    const sim = this.sim
    const args = { urn, ref: reference, type: event.type }
    return await this.call('recordCompletion', args, async () => await sim.store.recordCompletion(urn, reference, event), (out) => {
      const m = sim.model.customers.get(urn)
      this.compare('recordCompletion', args, m === undefined ? { err: 'CUSTOMER_NOT_FOUND' } : { ok: { available: m.available } }, out,
        (r: MoneyOpResult) => ({ available: r.available }))
    }, STORE_FAULTS)
  }

  async getDecision (urn: string, reference: string): Promise<DecisionRecord | null> {
    const sim = this.sim
    return await this.call('getDecision', { urn, ref: reference }, async () => await sim.store.getDecision(urn, reference), () => {}, STORE_FAULTS)
  }

  async reverse (urn: string, reference: string, amount: number | null, audit?: AuditContext): Promise<ReversalResult> {
    const sim = this.sim
    const args = { urn, ref: reference, amount }
    return await this.call('reverse', args, async () => await sim.store.reverse(urn, reference, amount, audit), (out) => {
      sim.touchedUrns.add(urn)
      sim.touchedRefs.add(refKey(urn, reference))
      this.compare('reverse', args, sim.model.reverse(urn, reference, amount), out, (r: ReversalResult) => ({ released: r.released, replayed: r.replayed }))
    }, STORE_FAULTS)
  }

  async readDecisionStream (urn: string, count?: number): Promise<Array<Record<string, string>>> {
    return await this.sim.store.readDecisionStream(urn, count)
  }

  async appendAudit (record: Omit<AuditRecord, 'atMs'>): Promise<AuditRecord> {
    return await this.sim.store.appendAudit(record)
  }

  async createLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<{ created: boolean, value: T }> {
    return await this.call('createLifecycle', { kind, id }, async () => await this.sim.store.createLifecycle(kind, id, value), (out) => {
      if (out.ok && out.value.created) this.written(kind, id)
    }, STORE_FAULTS)
  }

  async getLifecycle<T extends object> (kind: LifecycleKind, id: string): Promise<T | null> {
    return await this.call('getLifecycle', { kind, id }, async () => await this.sim.store.getLifecycle<T>(kind, id), () => {}, STORE_FAULTS)
  }

  async listLifecycle (urn: string, limit: number): Promise<LifecycleRef[]> {
    return await this.call('listLifecycle', { urn }, async () => await this.sim.store.listLifecycle(urn, limit), () => {}, STORE_FAULTS)
  }

  /**
   * A step of the settlement's exception queue (a FAILED lifecycle record's exception): queued and faulted as a
   * record's write; the model keeps no exceptions (the invariant lifecycle-queued reads them).
   */
  async settlementStep<T> (label: string, args: unknown, real: () => Promise<T>): Promise<T> {
    return await this.call(label, args, real, () => {}, RECORD_FAULTS)
  }

  async putLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T, expectedRev?: number, expires?: boolean): Promise<void> {
    return await this.call('putLifecycle', { kind, id, value }, async () => { await this.sim.store.putLifecycle(kind, id, value, expectedRev, expires) }, (out) => {
      if (out.ok) this.written(kind, id)
    }, RECORD_FAULTS)
  }

  /** a card-lifecycle record written: when first and latest (a record expires LIFECYCLE_TTL_SECONDS after its latest) */
  private written (kind: LifecycleKind, id: string): void {
    const key = `${kind}:${id}`
    const now = this.sim.clock.now()
    const w = this.sim.lifecycleWrites.get(key)
    this.sim.lifecycleWrites.set(key, { first: w?.first ?? now, last: now })
  }

  async renewLifecycleLock (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    return await this.call('renewLifecycleLock', { kind, id }, async () => {
      const held = await this.sim.store.renewLifecycleLock(kind, id, ttlMs, owner)
      if (held) this.sim.lockTaken(kind, id, ttlMs)
      return held
    }, () => {}, STORE_FAULTS)
  }

  async lockLifecycle (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    return await this.call('lockLifecycle', { kind, id }, async () => {
      const got = await this.sim.store.lockLifecycle(kind, id, ttlMs, owner)
      if (got) this.sim.lockTaken(kind, id, ttlMs)
      return got
    }, () => {}, STORE_FAULTS)
  }

  async unlockLifecycle (kind: LifecycleKind, id: string, owner: string): Promise<boolean> {
    return await this.call('unlockLifecycle', { kind, id }, async () => {
      const released = await this.sim.store.unlockLifecycle(kind, id, owner)
      if (released) this.sim.lockReleased(kind, id)
      return released
    }, () => {}, STORE_FAULTS)
  }

  async getCardControls (urn: string, last4: string): Promise<ControlEntries> {
    const sim = this.sim
    return await this.call('getCardControls', { urn, last4 }, async () => await sim.store.getCardControls(urn, last4), (out) => {
      this.compare('getCardControls', { urn, last4 }, sim.model.cardControls(urn, last4), out, (c: ControlEntries) => canonControls(c))
    }, STORE_FAULTS)
  }

  async patchCardControls (urn: string, last4: string, patch: ControlEntries, audit?: AuditContext): Promise<{ before: ControlEntries, after: ControlEntries }> {
    const sim = this.sim
    const args = { urn, last4, patch }
    return await this.call('patchCardControls', args, async () => await sim.store.patchCardControls(urn, last4, patch, audit), (out) => {
      sim.touchedUrns.add(urn)
      this.compare('patchCardControls', args, sim.model.patchCardControls(urn, last4, patch), out,
        (r: { before: ControlEntries, after: ControlEntries }) => canonControls(r.after))
    }, STORE_FAULTS)
  }

  ready (): boolean {
    return this.proc.alive && !this.sim.outage && this.sim.store.ready()
  }

  async ping (): Promise<void> {
    if (this.sim.outage) throw notSentError()
    await this.sim.store.ping()
  }

  async close (): Promise<void> {}
}

/** JSON that shows the numbers JSON cannot (a NaN amount must read as NaN in a report). */
export function show (v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x))
}

function sortKeys<T> (o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** The part of an answer both stores must agree on (no store clock, no record internals). */
function summarize (out: Outcome<unknown>): string {
  if (!out.ok) return `error ${errorCode(out.error)}`
  const v = out.value
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null)
  const o = v as Record<string, unknown>
  const pick: Record<string, unknown> = {}
  for (const k of ['code', 'reason', 'ruleId', 'replayed', 'available', 'released', 'status', 'created', 'held', 'debit', 'shadowLimitHits']) {
    if (k in o) pick[k] = o[k]
  }
  if ('cards' in o) pick.cards = sortKeys(o.cards as Record<string, unknown>)
  if ('value' in o && typeof o.value === 'object') pick.value = o.value
  return JSON.stringify(pick)
}
