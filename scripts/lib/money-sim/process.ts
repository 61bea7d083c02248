// "The process": everything extauth keeps in memory (the compensator, the decision pipeline's wiring, the
// lifecycle services, requests in flight), built over the shared store. A kill drops all of it: answers not
// yet sent are never sent, compensations still waiting are lost, queued calls may or may not have left.
// A restart builds a new one over the same store and the same parties. With stand-in on, the process
// decides in stand-in when a store call surely did not run; its journal is on the shared disk (stand-in.ts),
// which the next incarnation adopts at its start.
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
import { queueStandInNegativeBalance, queueStandInUnconfirmed } from '../../../src/settlement/standin-exception.js'
import type { NewException } from '../../../src/settlement/types.js'
import { SIM_HOLD_EXPIRY_MS, SIM_TIMEZONE, type ModelAuth } from './model.js'
import { Registry } from 'prom-client'
import { StandIn } from '../../../src/standin/stand-in.js'
import { standInMetrics } from '../../../src/standin/metrics.js'
import { journalOf, ScheduledJournal } from './stand-in.js'

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
  /** the stand-in of this incarnation, or null with stand-in off */
  readonly standIn: StandIn | null
  private readonly journal: ScheduledJournal | null
  private readonly deps: DecisionDeps
  private readonly died: Promise<null>
  private markDead: () => void = () => {}
  /** requests wait for the start: a restarted process takes requests once it has adopted what the dead one left */
  private readonly started: Promise<void>
  private isStarted = false
  private markStarted: () => void = () => {}
  private attemptSeq = 0

  /**
   * `journal` is the compensation journal on its volume: it outlives every incarnation of the process; so does
   * `standInDir`, the stand-in journal's folder (null: stand-in off)
   */
  constructor (private readonly sim: SimContext, readonly id: number, rules: CompiledRuleSet, books: PartyBooks, journal: CompensationJournal, standInDir: string | null) {
    this.died = new Promise<null>((resolve) => { this.markDead = () => resolve(null) })
    this.started = new Promise<void>((resolve) => { this.markStarted = resolve })
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
    // the settlement's exception queue as services.ts hands it to the moves and the stand-in, its step a queued
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
    const standInBooks = sim.standIn
    if (standInDir !== null && standInBooks !== null) {
      this.journal = new ScheduledJournal(sim, this, journalOf(standInDir, id))
      this.standIn = new StandIn({
        policy: standInBooks.policy,
        journal: this.journal,
        store: this.store,
        log: silent,
        metrics: standInMetrics(new Registry()),
        clock: sim.clock.now,
        // the replay's own timer never fires in a run: the simulation drives the replay (engine.ts)
        replayEveryMs: 2 ** 31 - 1,
        onNegativeBalance: (nb) => {
          standInBooks.figures.negative++
          standInBooks.told(refKey(nb.urn, nb.reference))
        },
        queueNegativeBalance: queueStandInNegativeBalance(queue),
        queueUnconfirmed: async (u) => {
          await queueStandInUnconfirmed(queue)(u)
          standInBooks.unconfirmed(sim, refKey(u.urn, u.reference))
        }
      })
    } else {
      this.journal = null
      this.standIn = null
    }
    this.deps = {
      ...(this.standIn !== null ? { standIn: this.standIn } : {}),
      store: this.store, rules: () => rules, timezone: SIM_TIMEZONE, clock: sim.clock.now, compensator: this.compensator,
      // holds that the run expires (engine.ts): what they hold is checked against the model (checkCustomer)
      ...(sim.opts.settlement === 'holds' ? { holdExpiry: (_mcc: string | undefined, nowMs: number) => nowMs + SIM_HOLD_EXPIRY_MS } : {})
    }
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
    // the stand-in approvals an earlier incarnation journaled and never replayed are this one's to replay
    this.standIn?.start()
    this.isStarted = true
    this.markStarted()
  }

  /** Stand-in approvals this process still has to replay. */
  get standInBacklog (): number {
    return this.standIn?.status().replayBacklog.count ?? 0
  }

  /** Replays its stand-in backlog as the replay's timer would; resolves when done, or when the process died. */
  async replayStandIn (): Promise<void> {
    if (this.standIn === null || !this.alive) return
    await this.answerOrDeath(this.standIn.replayNow())
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

  /** After a kill's queued calls went (or not): its journal file is closed, for the next start to adopt. */
  closeJournal (): void {
    this.journal?.close()
    // its timer stops (a replay under way never hears its store call's answer: not awaited)
    void this.standIn?.stop()
  }

  /**
   * POST /api/v1/externalAuth as the route runs it: the body schema, then the decision under the deadline
   * guard, whose firing aborts the decision and answers 05. Null when the process died first.
   */
  async externalAuth (body: AuthRequest, arrival: ModelAuth): Promise<Delivered | null> {
    const sim = this.sim
    let auth = arrival
    if (!this.isStarted) {
      // it arrives once the process has started
      await this.started
      auth = { ...arrival, nowMs: sim.clock.now() }
    }
    const key = refKey(body.urn, body.transactionReferenceNumber)
    const deliver = (d: Omit<Delivered, 'step' | 'debit' | 'last4' | 'atMs'>): Delivered => {
      const full: Delivered = { ...d, debit: auth.debit, last4: auth.last4, step: sim.step, atMs: sim.clock.now() }
      let list = sim.answers.get(key)
      if (list === undefined) sim.answers.set(key, list = [])
      list.push(full)
      sim.touchedRefs.add(key)
      sim.touchedUrns.add(body.urn)
      sim.counts.answers[`${d.code} ${d.via}`] = (sim.counts.answers[`${d.code} ${d.via}`] ?? 0) + 1
      if (d.via === 'standin') sim.standIn?.answered(sim, key, body.urn, body.last4Digits, auth.debit, d.code, d.replayed, d.check)
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
        (d) => {
          if (guard.done) return
          guard.release()
          const check = d.standIn === true ? d.values?.check : undefined
          settle({ code: d.code, via: d.standIn === true ? 'standin' : 'store', replayed: d.replayed, reason: d.reason, ...(typeof check === 'string' ? { check } : {}) })
        },
        () => { if (guard.done) return; guard.release(); settle({ code: '05', via: 'error', replayed: false, reason: 'store_error' }) }
      )
    })
    const out = await this.answerOrDeath(answer)
    return out === null ? null : (out as { value: Delivered }).value
  }
}
