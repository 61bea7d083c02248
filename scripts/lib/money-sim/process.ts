// "The process": everything extauth keeps in memory (the compensator, the decision pipeline's wiring, the
// lifecycle services, requests in flight), built over the shared store. A kill drops all of it: answers not
// yet sent are never sent, compensations still waiting are lost, queued calls may or may not have left.
// A restart builds a new one over the same store and the same parties.
import { Ajv } from 'ajv'
import pino from 'pino'
import type { CompensationJournal } from '../../../src/decision/compensation-journal.js'
import { Compensator } from '../../../src/decision/compensator.js'
import { InFlight, type Timers } from '../../../src/decision/deadline.js'
import { decide, type DecisionDeps } from '../../../src/decision/pipeline.js'
import type { AuthRequest } from '../../../src/domain/request.js'
import { authRequestSchema } from '../../../src/http/auth-schema.js'
import { LoadService } from '../../../src/moves/loads.js'
import { TransferService } from '../../../src/moves/transfers.js'
import { UnloadService } from '../../../src/moves/unloads.js'
import type { CompiledRuleSet } from '../../../src/rules/types.js'
import { refKey, type Delivered, type SimContext } from './context.js'
import { fakeGateway, fakePrepaid, type PartyBooks } from './fake-parties.js'
import { FaultyStore } from './faulty-store.js'
import { settlementFor } from '../../../src/settlement/for-store.js'
import { lifecycleFailedHook } from '../../../src/settlement/lifecycle-failed.js'
import type { NewException } from '../../../src/settlement/types.js'
import { SIM_HOLD_EXPIRY_MS, SIM_TIMEZONE, type ModelAuth } from './model.js'

/** The platform's deadline for an answer (the contract's 2000 ms). */
export const DEADLINE_MS = 2000

const validBody = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: true }).compile(authRequestSchema)
const silent = pino({ level: 'silent' })

export class SimProcess {
  alive = true
  readonly store: FaultyStore
  readonly compensator: Compensator
  readonly loads: LoadService
  readonly transfers: TransferService
  readonly unloads: UnloadService
  private readonly deps: DecisionDeps
  private readonly died: Promise<null>
  private markDead: () => void = () => {}
  private attemptSeq = 0

  /** `journal` is the compensation journal on its volume: it outlives every incarnation of the process */
  constructor (private readonly sim: SimContext, readonly id: number, rules: CompiledRuleSet, books: PartyBooks, journal: CompensationJournal) {
    this.died = new Promise<null>((resolve) => { this.markDead = () => resolve(null) })
    this.store = new FaultyStore(sim, this)
    // a timer is a queued call: the scheduler, not the wall clock, decides when a retry reaches the store
    const timers: Timers = {
      setTimeout: (fn) => {
        const handle = { cancelled: false }
        sim.scheduler.add({ owner: id, label: 'timer', run: async () => { if (!handle.cancelled && this.alive) fn() }, orphan: async () => {} })
        return handle
      },
      clearTimeout: (handle) => { (handle as { cancelled: boolean }).cancelled = true }
    }
    this.compensator = new Compensator(this.store, silent, undefined, { retryDelayMsMin: 0, retryDelayMsMax: 0, journal, timers })
    this.deps = {
      store: this.store, rules: () => rules, timezone: SIM_TIMEZONE, clock: sim.clock.now, compensator: this.compensator,
      // holds that the run expires (engine.ts): what they hold is checked against the model (checkCustomer)
      ...(sim.opts.settlement === 'holds' ? { holdExpiry: (_mcc: string | undefined, nowMs: number) => nowMs + SIM_HOLD_EXPIRY_MS } : {})
    }
    // a record left FAILED for an operator is queued as services.ts queues it, the exception's step a queued
    // call with a record write's faults
    const settlement = settlementFor(sim.store)
    const store = this.store
    const queue = new Proxy(settlement, {
      get (target, prop, receiver) {
        if (prop === 'openException') return async (x: NewException) => await store.settlementStep('openException', x, async () => await target.openException(x))
        const v = Reflect.get(target, prop, receiver) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
    const onFailed = lifecycleFailedHook(queue, silent)
    this.loads = new LoadService(this.store, fakeGateway(sim, this, books), sim.clock.now, undefined, onFailed)
    const prepaid = fakePrepaid(sim, this, books)
    this.transfers = new TransferService(this.store, prepaid, sim.clock.now, undefined, onFailed)
    this.unloads = new UnloadService(this.store, prepaid, sim.clock.now, undefined, onFailed)
  }

  /** Resolves with the call's result, or null when the process died before it answered. */
  async answerOrDeath<T> (p: Promise<T>): Promise<{ value: T } | { error: unknown } | null> {
    return await Promise.race([p.then((value) => ({ value }), (error: unknown) => ({ error })), this.died])
  }

  /** What a start does before it takes requests: the compensations an earlier incarnation left are sent again. */
  start (): void {
    this.compensator.recover()
  }

  /** Compensations this process still has to bring to the store. */
  get compensationsPending (): number {
    return this.alive ? this.compensator.pending : 0
  }

  async kill (): Promise<void> {
    this.alive = false
    this.markDead()
    await this.compensator.drain(0)
  }

  /**
   * POST /api/v1/externalAuth as the route runs it: the body schema, then the decision under the deadline
   * guard, whose firing aborts the decision and answers 05. Null when the process died first.
   */
  async externalAuth (body: AuthRequest, auth: ModelAuth): Promise<Delivered | null> {
    const sim = this.sim
    const key = refKey(body.urn, body.transactionReferenceNumber)
    const deliver = (d: Omit<Delivered, 'step' | 'debit' | 'last4' | 'atMs'>): Delivered => {
      const full: Delivered = { ...d, debit: auth.debit, last4: auth.last4, step: sim.step, atMs: sim.clock.now() }
      let list = sim.answers.get(key)
      if (list === undefined) sim.answers.set(key, list = [])
      list.push(full)
      sim.touchedRefs.add(key)
      sim.touchedUrns.add(body.urn)
      sim.counts.answers[`${d.code} ${d.via}`] = (sim.counts.answers[`${d.code} ${d.via}`] ?? 0) + 1
      return full
    }
    if (!validBody(body)) return deliver({ code: '05', via: 'refused', replayed: false, reason: 'bad_request' })
    const attempt = `p${this.id}.${++this.attemptSeq}`
    const arrivedAtMs = sim.clock.now()
    const deadlineAtMs = arrivedAtMs + DEADLINE_MS
    const answer = new Promise<Delivered>((resolve) => {
      let settled = false
      const settle = (d: Omit<Delivered, 'step' | 'debit' | 'last4' | 'atMs'>): void => {
        if (settled || !this.alive) return
        settled = true
        resolve(deliver(d))
      }
      // the endpoint's guard for this request: expiring it runs the decision's abort hook, then the 05
      const guard = new InFlight(deadlineAtMs, () => { settle({ code: '05', via: 'deadline', replayed: false, reason: 'deadline' }) })
      sim.attempts.set(attempt, {
        auth,
        fireGuard: () => {
          if (settled || !this.alive) return
          guard.expire()
        }
      })
      decide(body, { arrivedAtMs, deadlineAtMs, abort: guard, attempt }, this.deps).then(
        // as the endpoint's guard does on `finish`: a decision that answers lets go of its abort hook
        (d) => { if (guard.done) return; guard.release(); settle({ code: d.code, via: 'store', replayed: d.replayed, reason: d.reason }) },
        () => { if (guard.done) return; guard.release(); settle({ code: '05', via: 'error', replayed: false, reason: 'store_error' }) }
      )
    })
    const out = await this.answerOrDeath(answer)
    return out === null ? null : (out as { value: Delivered }).value
  }
}
