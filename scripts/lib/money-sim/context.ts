// The state one simulation run shares between its parts: the real store, the model, the queue of calls,
// the clock, what was answered to the clients, and the counts for the summary.
import type { Random } from '../../../src/sim/prng.js'
import type { Store } from '../../../src/store/types.js'
import type { Model, ModelAuth } from './model.js'
import type { StandInBooks } from './stand-in.js'
import type { FaultKind, SimOptions } from './options.js'
import type { Scheduler } from './scheduler.js'

export interface ManualClock {
  now: () => number
  advance: (ms: number) => void
}

export function manualClock (startMs: number): ManualClock {
  let t = startMs
  return { now: () => t, advance: (ms) => { t += ms } }
}

/** What the platform was answered for one request of a reference, in the order the answers left. */
export interface Delivered {
  code: string
  /**
   * store: the decision (new or replayed); standin: decided in stand-in (the store surely not reached);
   * deadline: the guard; error: a store error; refused: the body schema
   */
  via: 'store' | 'standin' | 'deadline' | 'error' | 'refused'
  debit: number
  last4: string
  replayed: boolean
  reason: string
  /** a stand-in decline: the policy check or cap that declined it */
  check?: string
  step: number
  /** the simulated clock when it left */
  atMs: number
}

export interface AttemptInfo {
  auth: ModelAuth
  /** the route's deadline guard: answers 05 and aborts the decision */
  fireGuard: () => void
}

export interface Violation {
  invariant: string
  step: number
  op: string
  detail: string
}

export class SimViolation extends Error {
  constructor (readonly violation: Violation) {
    super(`${violation.invariant} at step ${violation.step} (${violation.op}): ${violation.detail}`)
    this.name = 'SimViolation'
  }
}

export interface Counts {
  ops: Record<string, number>
  faults: Record<string, number>
  storeCalls: number
  partyCalls: number
  answers: Record<string, number>
}

export interface ProcessHandle {
  readonly id: number
  readonly alive: boolean
}

export interface SimContext {
  readonly opts: SimOptions
  readonly rnd: Random
  readonly model: Model
  readonly scheduler: Scheduler
  /** the real store, shared by every process incarnation */
  readonly store: Store
  readonly clock: ManualClock
  readonly counts: Counts
  readonly attempts: Map<string, AttemptInfo>
  /** keyed by JSON [urn, reference] */
  readonly answers: Map<string, Delivered[]>
  readonly touchedUrns: Set<string>
  readonly touchedRefs: Set<string>
  /** card-lifecycle records written through the store ('<kind>:<id>'): the clock at their first and latest write */
  readonly lifecycleWrites: Map<string, { first: number, last: number }>
  readonly violations: Violation[]
  readonly trace: string[] | null
  step: number
  opName: string
  /** a store outage is under way: every store call fails before it is sent (faulty-store.ts) */
  outage: boolean
  /** the simulation's own account of stand-in approvals, or null with stand-in off */
  readonly standIn: StandInBooks | null
  /** the store's own clock for deadlines: the manual clock in memory, the wall clock for Redis */
  storeNow: () => number
  /** a fault for one call, or null; counted */
  fault: (candidates: readonly FaultKind[]) => FaultKind | null
  violation: (invariant: string, detail: string) => void
  /** Redis keeps lock expiries on its own clock: the simulation ends locks its manual clock has expired */
  lockTaken: (kind: string, id: string, ttlMs: number) => void
  lockReleased: (kind: string, id: string) => void
  /** a party call of this reference outlives its lock: time passes, and a second caller of it comes */
  stalled: (ref: string) => void
}

export const refKey = (urn: string, reference: string): string => JSON.stringify([urn, reference])
