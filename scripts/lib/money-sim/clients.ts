// The callers, behaving as the README tells them to: the platform repeats a request it got no answer to
// with the same reference; an operator repeats an admin call that failed; a lifecycle client repeats a call
// answered FAILED with `retryable: true`, 409 IN_PROGRESS (after a pause) or an error, and stops at a final
// status or at `retryable: false`.
import type { AuthRequest } from '../../../src/domain/request.js'
import type { LifecycleAnswer } from '../../../src/moves/answer.js'
import { LifecycleConflict, LifecycleNotFound } from '../../../src/moves/errors.js'
import { LIFECYCLE_TTL_SECONDS } from '../../../src/store/types.js'
import type { Delivered, SimContext } from './context.js'
import { customerIdOf, SIM_OTP, type PartyBooks } from './fake-parties.js'
import type { ModelAuth } from './model.js'
import type { SimProcess } from './process.js'
import type { World } from './world.js'

export interface RecentAuth {
  body: AuthRequest
  auth: ModelAuth
}

export interface LoadJob {
  kind: 'load'
  ref: string
  urn: string
  amount: number
  phase: 'start' | 'verify' | 'done' | 'gave-up'
  wrongOtp: boolean
  last: LifecycleAnswer | null
}

export interface TransferJob {
  kind: 'transfer'
  id: string
  fromUrn: string
  toUrn: string
  amount: number
  phase: 'send' | 'done' | 'gave-up'
  last: LifecycleAnswer | null
  /** the clock when its latest call that may have changed its record ended (answered or not) */
  lastCallEndMs?: number
  /** a repeat came a record's lifetime or more after that: a settled record may have been forgotten */
  outlived?: boolean
  /** what the earlier lives of its id moved, when its settled record expired and a repeat began anew */
  lifeBase?: LifeBase
}

/** The sender's net hold and the receiver's credit a held move's id had when its record was forgotten. */
export interface LifeBase { held: number, received: number }

export interface UnloadJob {
  kind: 'unload'
  id: string
  urn: string
  amount: number
  fee: number
  phase: 'send' | 'done' | 'gave-up'
  last: LifecycleAnswer | null
  /** the clock when its first call started: extauth looked for another kind's use of its id no earlier */
  firstCallMs?: number
  /** the transfer whose clientTxnId it reuses (`shared-txn-ids`) */
  reuses?: TransferJob
  /** as a transfer's */
  lastCallEndMs?: number
  outlived?: boolean
  lifeBase?: LifeBase
}

export type Job = LoadJob | TransferJob | UnloadJob

export interface OpEnv {
  sim: SimContext
  world: World
  books: PartyBooks
  proc: () => SimProcess
  recent: RecentAuth[]
  jobs: Job[]
  /** jobs not finished yet (a later `resume` step, or the end of the run, carries them on) */
  parked: Job[]
  seq: () => number
  /** the run is over (a violation stopped it): clients stop repeating */
  ended: () => boolean
  /** a kill comes at one of the next points where stand-in journal lines or replays are on their way */
  armStandInKill: (armed: boolean) => void
  /** jobs a step has driven: checked after it */
  touchedJobs: Set<Job>
  /** a client told IN_PROGRESS waits longer than a lock lives */
  waitOutLocks: () => Promise<void>
}

/** The platform sends a request until it hears an answer (a dead process answers nothing). */
export async function platformSend (env: OpEnv, body: AuthRequest, auth: ModelAuth): Promise<Delivered> {
  for (;;) {
    if (env.ended()) throw new Error('the run is over')
    const d = await env.proc().externalAuth(body, { ...auth, nowMs: env.sim.clock.now() })
    if (d !== null) return d
    // The platform hears nothing from a dead process until its own timeout, so its next attempt arrives later:
    // never in the same millisecond, which is the store's tie between two attempts (the one it saw last keeps
    // the decision).
    env.sim.clock.advance(1)
  }
}

/** An admin call repeated until it is answered, refused with a reason, or `tries` run out. */
export async function adminCall<T> (env: OpEnv, call: (p: SimProcess) => Promise<T>, tries = 5): Promise<void> {
  for (let i = 0; i < tries; i++) {
    const p = env.proc()
    const out = await p.answerOrDeath(call(p))
    if (out === null) continue
    if ('value' in out) return
    if ((out.error as { name?: string }).name === 'StoreRejection') return
  }
}

function isInProgress (err: unknown): boolean {
  return err instanceof LifecycleConflict && err.word === 'IN_PROGRESS'
}

function isFinalError (err: unknown): boolean {
  return err instanceof LifecycleNotFound || (err instanceof LifecycleConflict && err.word !== 'IN_PROGRESS')
}

/** Drives a load for at most `tries` calls; returns when it is done, given up, or out of tries. */
export async function runLoad (env: OpEnv, job: LoadJob, tries: number): Promise<void> {
  env.touchedJobs.add(job)
  for (let i = 0; i < tries && (job.phase === 'start' || job.phase === 'verify'); i++) {
    const p = env.proc()
    const call = job.phase === 'start'
      ? p.loads.start({ urn: job.urn, amount: job.amount, merchantReferenceNo: job.ref, pan: '4111110000001234', expDate: '122030', cvd2: '123', currencyCode: '356', nameOnCard: 'A B', mobileNumber: '9999999999' })
      : p.loads.verify(job.ref, job.wrongOtp ? '000000' : SIM_OTP)
    const out = await p.answerOrDeath(call)
    if (out === null) continue
    if ('error' in out) {
      if (isInProgress(out.error)) await env.waitOutLocks()
      else if (isFinalError(out.error)) job.phase = 'done'
      continue
    }
    const a = out.value
    job.last = a
    switch (a.status) {
      case 'LOADED': case 'DECLINED': case 'OTP_EXHAUSTED':
        job.phase = 'done'; break
      case 'FAILED':
        if (a.retryable !== true) job.phase = 'gave-up'
        break
      case 'OTP_INVALID':
        job.wrongOtp = false; job.phase = 'verify'; break
      default:
        job.phase = 'verify'
    }
  }
}

/**
 * A held move (transfer or unload) as a client makes it: the same values on every repeat, until the call
 * is done, given up, or out of tries.
 */
async function runHeldMove<A extends LifecycleAnswer> (env: OpEnv, job: TransferJob | UnloadJob, tries: number,
  call: (p: ReturnType<OpEnv['proc']>) => Promise<A>, doneStatus: string): Promise<void> {
  env.touchedJobs.add(job)
  if (job.kind === 'unload') job.firstCallMs ??= env.sim.clock.now()
  for (let i = 0; i < tries && job.phase === 'send'; i++) {
    const now = env.sim.clock.now()
    const ttlMs = LIFECYCLE_TTL_SECONDS * 1000
    // a record expires that long after its latest write, which may come well before the client's latest call
    // ended (a call that died before it wrote anything)
    const writes = env.sim.lifecycleWrites.get(`${job.kind}:${job.id}`)
    const byCall = job.lastCallEndMs !== undefined && now - job.lastCallEndMs >= ttlMs
    const byWrite = job.lastCallEndMs !== undefined && writes !== undefined && now - writes.last >= ttlMs
    if (byCall || byWrite) {
      // its settled record expired: to extauth this repeat is a new call, a new life of the id, checked apart
      // from what the earlier lives moved (a record still holding money is kept, and the life goes on)
      const gone = await env.sim.store.getLifecycle(job.kind, job.id) === null
      if (byCall || gone) job.outlived = true
      if (gone) job.lifeBase = lifeTotals(env.sim.model, job)
    }
    const p = env.proc()
    const out = await p.answerOrDeath(call(p))
    // a repeat answered from a final record (replayed) leaves it as it was
    const replayed = out !== null && 'value' in out && (out.value as { replayed?: boolean }).replayed === true
    if (!replayed) job.lastCallEndMs = env.sim.clock.now()
    if (out === null) continue
    if ('error' in out) {
      if (isInProgress(out.error)) await env.waitOutLocks()
      else if (isFinalError(out.error)) job.phase = 'done'
      continue
    }
    job.last = out.value
    if (out.value.status === doneStatus || out.value.status === 'DECLINED') job.phase = 'done'
    else if (out.value.status === 'FAILED' && out.value.retryable !== true) job.phase = 'gave-up'
  }
}

/** POST /v1/transfers as a client makes it. */
export async function runTransfer (env: OpEnv, job: TransferJob, tries: number): Promise<void> {
  await runHeldMove(env, job, tries, async (p) => await p.transfers.transfer({
    clientTxnId: job.id, fromUrn: job.fromUrn, toUrn: job.toUrn, fromAccountNumber: '100001', toAccountNumber: '100002', amount: job.amount
  }), 'TRANSFERRED')
}

/** POST /v1/unloads as a client makes it. */
export async function runUnload (env: OpEnv, job: UnloadJob, tries: number): Promise<void> {
  await runHeldMove(env, job, tries, async (p) => await p.unloads.unload({
    clientTxnId: job.id, urn: job.urn, customerId: customerIdOf(job.urn), accountNumber: '100001', amount: job.amount, fee: job.fee,
    receiver: 'A B', sourceType: 0, fundFlowType: 'WALLET_TO_BANK', implId: 'IMPL1', implType: 'BANK', beneficiaryId: 7
  }), 'UNLOADED')
}

export async function runJob (env: OpEnv, job: Job, tries: number): Promise<void> {
  if (job.kind === 'load') await runLoad(env, job, tries)
  else if (job.kind === 'transfer') await runTransfer(env, job, tries)
  else await runUnload(env, job, tries)
}

export function jobOpen (job: Job): boolean {
  return job.phase !== 'done' && job.phase !== 'gave-up'
}

/** What a held move's id has moved so far, by the model: the sender's net hold, the receiver's credit. */
export function lifeTotals (m: SimContext['model'], job: TransferJob | UnloadJob): LifeBase {
  if (job.kind === 'transfer') return { held: m.heldNet(job.fromUrn, 'transfer', job.id), received: m.movedBy(job.toUrn, 'credit', `transfer:${job.id}:receive`) }
  return { held: m.heldNet(job.urn, 'unload', job.id), received: 0 }
}
