// One simulation run: builds the world over a store, runs `steps` operations drawn from the seed with faults
// and kills, checks the invariants after every step, lets every client finish without faults at the end, and
// checks everything once more.
import { MemoryCompensationJournal } from '../../../src/decision/compensation-journal.js'
import { compileRuleFiles } from '../../../src/rules/load.js'
import type { CompiledRuleSet } from '../../../src/rules/types.js'
import { intBetween, seededRandom } from '../../../src/sim/prng.js'
import type { Store } from '../../../src/store/types.js'
import { jobOpen, runJob, type Job, type OpEnv, type RecentAuth } from './clients.js'
import { manualClock, refKey, SimViolation, type Counts, type Delivered, type SimContext, type Violation } from './context.js'
import { PartyBooks } from './fake-parties.js'
import { EventFold } from './event-fold.js'
import { checkCustomer, checkDecision, checkJob, checkReplay, checkWindows, type CheckEnv } from './invariants.js'
import { Model, SIM_HOLD_EXPIRY_MS, SIM_RULES, SIM_TIMEZONE } from './model.js'
import { settlementFor } from '../../../src/settlement/for-store.js'
import { expireDue } from '../../../src/settlement/expiry.js'
import { OPS, type OpSpec } from './ops.js'
import { SimPlatform } from './statements.js'
import { enabled, type FaultKind, type SimOptions } from './options.js'
import { SimProcess } from './process.js'
import { rawState } from './raw-state.js'
import { Scheduler } from './scheduler.js'
import { buildWorld } from './world.js'
import { seedEarlierRecords, writeEarlierRecords, type EarlierRecord } from './earlier-records.js'
import { StandInBooks, type StandInFigures } from './stand-in.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The simulated clock starts here on every run, so a seed replays the same windows and calendar days. */
export const SIM_EPOCH_MS = Date.UTC(2026, 10, 23, 10, 0, 0)

export interface StoreUnderTest {
  store: Store
  /** key prefix (Redis) or '' (memory) */
  prefix: string
  close: () => Promise<void>
}

export interface SimResult {
  seed: number
  store: string
  stepsRun: number
  counts: Counts & { kills: number }
  /** loads, transfers and unloads left to an operator with a reconcile note (README) */
  reconcile: number
  /** card-lifecycle records of earlier formats the run started from (earlier-records.ts) */
  earlierRecords: number
  /** outbox events folded into balances (event-fold.ts) */
  eventsFolded: number
  /** stand-in: outages, answers, replays and the most one outage used of the caps (null: stand-in off) */
  standIn: StandInFigures | null
  violations: Violation[]
  elapsedMs: number
  trace: string[] | null
}

function compileSimRules (): CompiledRuleSet {
  const r = compileRuleFiles([{ name: '10-sim.json', text: JSON.stringify({ rules: SIM_RULES }) }], { timezone: SIM_TIMEZONE })
  if (!r.ok) throw new Error('the simulation rule set is refused: ' + JSON.stringify(r.errors))
  return r.set
}

/** how often (in steps) the simulation runs hold expiry in holds mode */
const EXPIRY_EVERY_STEPS = 25
/** how often (in steps) the simulated platform publishes a statement in holds mode (statements.ts) */
const STATEMENT_EVERY_STEPS = 40
/** the latest authorizations a client is likeliest still to repeat or reverse: left off a statement until later */
const STATEMENT_SKIP_RECENT = 20

function modelFor (opts: SimOptions, now: () => number): Model {
  const m = new Model(now)
  if (opts.settlement === 'holds') m.holdTtlMs = SIM_HOLD_EXPIRY_MS
  return m
}

/** `makeStore` gets the simulated clock (the memory store runs on it). */
export async function runSimulation (opts: SimOptions, makeStore: (clock: () => number) => Promise<StoreUnderTest>): Promise<SimResult> {
  const started = Date.now()
  const rnd = seededRandom(opts.seed)
  const clock = manualClock(SIM_EPOCH_MS)
  const sut = await makeStore(clock.now)
  const raw = rawState(sut.store, sut.prefix)
  const counts: Counts & { kills: number } = { ops: {}, faults: {}, storeCalls: 0, partyCalls: 0, answers: {}, kills: 0 }
  const violations: Violation[] = []
  const locks = new Map<string, { kind: string, id: string, expiresAtMs: number }>()
  let faultsOn = false
  const sim: SimContext = {
    opts,
    rnd,
    model: modelFor(opts, clock.now),
    scheduler: new Scheduler(rnd),
    store: sut.store,
    clock,
    counts,
    attempts: new Map(),
    answers: new Map(),
    touchedUrns: new Set(),
    touchedRefs: new Set(),
    lifecycleWrites: new Map(),
    violations,
    trace: opts.trace ? [] : null,
    step: 0,
    opName: 'setup',
    outage: false,
    standIn: enabled(opts, 'standin') ? new StandInBooks() : null,
    storeNow: sut.store.kind === 'memory' ? clock.now : Date.now,
    fault: (candidates: readonly FaultKind[]) => {
      if (!faultsOn || rnd() >= opts.faultRate) return null
      const on = candidates.filter((k) => enabled(opts, k))
      if (on.length === 0) return null
      const k = on[Math.floor(rnd() * on.length)] as FaultKind
      counts.faults[k] = (counts.faults[k] ?? 0) + 1
      return k
    },
    violation: (invariant, detail) => {
      const v = { invariant, step: sim.step, op: sim.opName, detail }
      violations.push(v)
      if (opts.stopOnViolation) throw new SimViolation(v)
    },
    lockTaken: (kind, id, ttlMs) => { locks.set(`${kind}\u0000${id}`, { kind, id, expiresAtMs: clock.now() + ttlMs }) },
    lockReleased: (kind, id) => { locks.delete(`${kind}\u0000${id}`) },
    stalled: (ref) => { stalled(ref) }
  }

  // the stand-in books follow the balances a replay left below zero
  if (sim.standIn !== null) {
    const standIn = sim.standIn
    sim.model.onBalance = (urn, available) => { standIn.balance(urn, available) }
  }
  const books = new PartyBooks()
  const rules = compileSimRules()
  const world = buildWorld(rnd, enabled(opts, 'colliding-keys'))
  const journal = new MemoryCompensationJournal()
  // the stand-in journal's disk: every incarnation of the process writes and adopts there
  const standInDir = sim.standIn === null ? null : mkdtempSync(join(tmpdir(), 'extauth-sim-standin-'))
  let procSeq = 0
  let proc = new SimProcess(sim, ++procSeq, rules, books, journal, standInDir)
  proc.start()
  const recent: RecentAuth[] = []
  const jobs: Job[] = []
  const parked: Job[] = []
  let seq = 0
  let killsOn = false
  let ended = false
  /** a store-outage operation asks for a kill while stand-in journal lines or replays are on their way */
  let standInKillArmed = false

  // Redis counts a lock's life on its own clock; here it ends when the simulated clock says so
  const expireLocks = async (): Promise<void> => {
    for (const [k, l] of locks) {
      if (l.expiresAtMs > clock.now()) continue
      await raw.dropLock(l.kind, l.id)
      locks.delete(k)
    }
  }
  const env: OpEnv = {
    sim,
    world,
    books,
    proc: () => proc,
    recent,
    jobs,
    parked,
    seq: () => ++seq,
    ended: () => ended,
    armStandInKill: (armed) => { standInKillArmed = armed },
    touchedJobs: new Set(),
    // a pause longer than a lock lives; in the scheduler, so that it happens at a reproducible point
    waitOutLocks: async () => await new Promise<void>((resolve) => {
      sim.scheduler.add({
        owner: -1,
        label: 'wait',
        run: async () => {
          clock.advance(61_000)
          await expireLocks()
          resolve()
        },
        orphan: async () => { resolve() }
      })
    })
  }
  // a second client of a reference whose call stalls: it arrives once the lock has run out
  const background: Array<Promise<void>> = []
  const stalled = (ref: string): void => {
    const job = [...jobs].reverse().find((j) => (j.kind === 'load' ? j.ref : j.id) === ref)
    if (job === undefined) return
    const twin = { ...job, phase: job.kind === 'load' ? (job.phase === 'start' ? 'start' : 'verify') : 'send', last: null } as Job
    background.push((async () => {
      await env.waitOutLocks()
      await runJob(env, twin, 3)
    })())
  }
  const checkEnv: CheckEnv = { sim, raw, books, reconcile: new Set() }
  const fold = new EventFold()

  const kill = async (kind: 'kill' | 'kill-compensating' | 'kill-standin'): Promise<void> => {
    counts.kills++
    sim.trace?.push(`step ${sim.step}: ${kind} process ${proc.id}`)
    counts.faults[kind] = (counts.faults[kind] ?? 0) + 1
    const dead = proc
    // the restarted process is there before the clients notice the death, and repeat their calls to it
    proc = new SimProcess(sim, ++procSeq, rules, books, journal, standInDir)
    await dead.kill()
    // calls it had queued may have left before it died; nobody hears their answers
    for (const c of sim.scheduler.take((c) => c.owner === dead.id)) await c.orphan()
    dead.closeJournal()
    proc.start()
  }
  // every timer is a queued call: nothing is due outside the queue
  const timersDue = (): boolean => false
  const between = async (): Promise<void> => {
    if (standInKillArmed && faultsOn && sim.scheduler.count((c) => c.owner === proc.id && (c.label === 'journal' || c.label === 'replay')) > 0 && rnd() < 0.3) {
      standInKillArmed = false
      if (enabled(opts, 'kill-standin')) { await kill('kill-standin'); return }
    }
    // the instants with a compensation on its way are few and the ones that matter: kills seek them out
    const compensating = proc.compensationsPending > 0
    if (!killsOn || rnd() >= opts.killRate * (compensating ? 10 : 1)) return
    const kind = compensating ? 'kill-compensating' : 'kill'
    if (enabled(opts, kind)) await kill(kind)
  }
  const settle = async (work: Promise<void>): Promise<void> => {
    let done = false
    let failure: unknown = null
    work.then(() => { done = true }, (err: unknown) => { done = true; failure = err })
    await sim.scheduler.drain(timersDue, between)
    await sim.scheduler.quiesce(timersDue)
    const twins = background.splice(0)
    await Promise.race([Promise.all(twins), sim.scheduler.quiesce(() => false).then(async () => { throw new Error(`step ${sim.step}: a second client never finished`) })])
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- set in the then() callbacks above, which the type checker's narrowing does not see
    if (failure !== null) throw failure
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the same
    if (!done) throw new Error(`step ${sim.step} (${sim.opName}) is waiting on something outside the scheduler`)
  }

  const checkTouched = async (last4sByUrn: Map<string, Set<string>>): Promise<void> => {
    await fold.check(checkEnv, sim.touchedUrns)
    for (const urn of sim.touchedUrns) {
      await checkCustomer(checkEnv, urn)
      await checkWindows(checkEnv, urn, last4sByUrn.get(urn) ?? [])
    }
    for (const key of sim.touchedRefs) await checkDecision(checkEnv, key)
    sim.touchedUrns.clear()
    sim.touchedRefs.clear()
  }
  const last4s = new Map<string, Set<string>>()
  const noteLast4 = (urn: string, last4: string): void => {
    let s = last4s.get(urn)
    if (s === undefined) last4s.set(urn, s = new Set())
    s.add(last4)
  }

  const ops: OpSpec[] = OPS.filter((o) => enabled(opts, o.kind) && !(o.memoryOnly === true && sut.store.kind !== 'memory'))
  const totalWeight = ops.reduce((s, o) => s + o.weight, 0)
  const pickOp = (): OpSpec => {
    let x = rnd() * totalWeight
    for (const o of ops) {
      x -= o.weight
      if (x < 0) return o
    }
    return ops[ops.length - 1] as OpSpec
  }

  let stepsRun = 0
  const platform = opts.settlement === 'holds' ? new SimPlatform(opts.seed) : null
  let earlier: EarlierRecord[] = []
  let lastProgress = Date.now()
  try {
    // opening state, without faults
    await settle((async () => {
      for (const c of world.customers) {
        await proc.store.putCustomer(c.urn, {})
        for (const card of c.cards) { await proc.store.putCard(c.urn, card, 'ACTIVE'); noteLast4(c.urn, card) }
        if (c.opening > 0) await proc.store.credit(c.urn, c.opening, 'opening')
      }
      if (enabled(opts, 'earlier-formats')) earlier = await seedEarlierRecords(env)
    })())
    // outside the scheduler: the store itself, as the earlier version wrote them
    await writeEarlierRecords(sim.store, earlier)
    await checkTouched(last4s)

    faultsOn = true
    killsOn = enabled(opts, 'kill') || enabled(opts, 'kill-compensating')
    for (let i = 1; i <= opts.steps; i++) {
      sim.step = i
      clock.advance(intBetween(rnd, 20, 2_000))
      await expireLocks()
      if (proc.standInBacklog > 0) {
        // the replay's timer: stand-in approvals still owed to the store are sent again
        sim.opName = 'standin-replay'
        await settle(proc.replayStandIn())
      }
      const op = pickOp()
      sim.opName = op.kind
      sim.trace?.push(`step ${i}: ${op.kind}`)
      counts.ops[op.kind] = (counts.ops[op.kind] ?? 0) + 1
      const before = op.kind === 'auth-repeat' ? recent.length : -1
      const lastBefore = new Map<string, ReturnType<typeof lastAnswer>>()
      if (before > 0) for (const r of recent) lastBefore.set(refKey(r.body.urn, r.body.transactionReferenceNumber), lastAnswer(sim, r.body.urn, r.body.transactionReferenceNumber))
      await settle(op.run(env))
      sim.attempts.clear()
      for (const r of recent.slice(-4)) noteLast4(r.body.urn, r.body.last4Digits)
      if (before > 0) {
        for (const [key, prev] of lastBefore) {
          const list = sim.answers.get(key) ?? []
          const now = list[list.length - 1]
          if (now !== undefined && now !== prev && now.step === i) checkReplay(sim, key, prev, now)
        }
      }
      sim.standIn?.settled(sim, proc.standInBacklog)
      await checkTouched(last4s)
      for (const job of env.touchedJobs) await checkJob(checkEnv, job, false)
      env.touchedJobs.clear()
      if (opts.settlement === 'holds' && i % EXPIRY_EVERY_STEPS === 0) {
        // another instance's expiry run, between two steps: the store's and the model's due holds released
        const expired = await expireDue(settlementFor(sut.store), clock.now())
        const urns = sim.model.expireDue(clock.now(), SIM_HOLD_EXPIRY_MS)
        counts.ops.expiry = (counts.ops.expiry ?? 0) + expired
        if (expired !== urns.length) sim.violation('balance', `expiry released ${expired} holds, the model ${urns.length}`)
        for (const urn of urns) sim.touchedUrns.add(urn)
        await checkTouched(last4s)
      }
      if (platform !== null && i % STATEMENT_EVERY_STEPS === 0) {
        // the platform's statement, imported between two steps; the references a client may still repeat or reverse are left out
        await platform.publish(sim, sut.store, settlementFor(sut.store), new Set(recent.slice(-STATEMENT_SKIP_RECENT).map((r) => refKey(r.body.urn, r.body.transactionReferenceNumber))))
        await checkTouched(last4s)
      }
      pruneJobs(jobs)
      if (i % 1000 === 0) pruneAnswers(sim, recent)
      stepsRun = i
      if (opts.progress !== undefined && (i % (opts.progressEvery ?? 10_000) === 0 || Date.now() - lastProgress > 10_000)) {
        lastProgress = Date.now()
        opts.progress(`step ${i}/${opts.steps} seed=${opts.seed} store=${opts.store} kills=${counts.kills} faults=${Object.values(counts.faults).reduce((a, b) => a + b, 0)} ${Math.round((Date.now() - started) / i * 1000)} ms/1000 steps`)
      }
    }

    // the end: no more faults; every client finishes what it started, then everything is checked
    faultsOn = false
    killsOn = false
    sim.opName = 'finish'
    await settle((async () => {
      for (const job of [...parked]) await runJob(env, job, 30)
      for (let i = 0; i < 10 && proc.standInBacklog > 0; i++) await proc.replayStandIn()
    })())
    if (proc.standInBacklog > 0) sim.violation('standin-replayed-once', `${proc.standInBacklog} stand-in approvals still not replayed at the end, with the store answering`)
    sim.standIn?.settled(sim, proc.standInBacklog)
    for (const job of jobs) await checkJob(checkEnv, job, true)
    for (const c of world.customers) sim.touchedUrns.add(c.urn)
    for (const key of sim.answers.keys()) sim.touchedRefs.add(key)
    for (const d of [...sim.model.decisions.values()]) sim.touchedRefs.add(refKey(d.urn, d.reference))
    await checkTouched(last4s)
  } catch (err) {
    if (!(err instanceof SimViolation)) throw err
  } finally {
    ended = true
    platform?.close()
    await proc.kill()
    proc.closeJournal()
    await sut.close()
    if (standInDir !== null) rmSync(standInDir, { recursive: true, force: true })
  }
  if (platform !== null) Object.assign(counts.ops, { statements: platform.counts.statements, 'statement-lines': platform.counts.lines, 'statement-reimports': platform.counts.reimports, 'statement-interrupted': platform.counts.interrupted, 'statement-overlap-lines': platform.counts.duplicateLines, 'statement-refused-too-old': platform.counts.refusedTooOld })
  return { seed: opts.seed, store: opts.store, stepsRun, counts, reconcile: checkEnv.reconcile.size, earlierRecords: earlier.length, eventsFolded: fold.events, standIn: sim.standIn?.figures ?? null, violations, elapsedMs: Date.now() - started, trace: sim.trace }
}

function lastAnswer (sim: SimContext, urn: string, reference: string): Delivered | undefined {
  const list = sim.answers.get(refKey(urn, reference))
  return list?.[list.length - 1]
}

/** Answers are kept for the references a later step may repeat; older ones have been checked already. */
function pruneAnswers (sim: SimContext, recent: RecentAuth[]): void {
  if (sim.answers.size < 5_000) return
  const keep = new Set(recent.slice(-STATEMENT_SKIP_RECENT).map((r) => refKey(r.body.urn, r.body.transactionReferenceNumber)))
  for (const key of sim.answers.keys()) if (!keep.has(key)) sim.answers.delete(key)
}

/** Finished jobs are checked once more at the end only if they are recent: a long run keeps its memory bounded. */
function pruneJobs (jobs: Job[]): void {
  if (jobs.length < 2_000) return
  const keep = jobs.filter((j, i) => jobOpen(j) || i >= jobs.length - 500)
  jobs.length = 0
  jobs.push(...keep)
}
