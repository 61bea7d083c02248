// A seeded simulation of stand-in (docs/operations/standin.md): the decision pipeline with a stand-in policy on two
// instances over one store that goes down and comes back in phases, with bursts of concurrent requests, repeats and conflicts of
// references, deadlines that answer 05 before the journal is flushed, and kills of the process (its unflushed
// journal lines lost, the next incarnation adopting the rest). After every step, from the answers alone:
// - standin-within-caps: between two points where the store answers and holds every stand-in approval, the
//   stand-in approvals of a card and of an instance on each instance stay within the policy's caps;
// - standin-replayed-once: at such a point every reference answered 00 (stand-in or not) is one 00 decision
//   in the store with one decision.created event, and every balance is its opening less those debits once.
// The same seed replays the same run.
import { decide, type DecisionDeps } from '../../src/decision/pipeline.js'
import { InFlight } from '../../src/decision/deadline.js'
import { compileRuleFiles } from '../../src/rules/load.js'
import { intBetween, pick, seededRandom, type Random } from '../../src/sim/prng.js'
import { StandIn } from '../../src/standin/stand-in.js'
import { outageOf, pendingOf, type Adopted, type EntryName, type StandInEntry, type StandInJournal } from '../../src/standin/journal.js'
import { standInMetrics } from '../../src/standin/metrics.js'
import { parsePolicy, type StandInPolicy } from '../../src/standin/policy.js'
import type { Store } from '../../src/store/types.js'
import { createLogger } from '../../src/logger.js'
import { Registry } from 'prom-client'
import { authBody } from '../helpers/config.js'
import type { AuthRequest } from '../../src/domain/request.js'
import { switchedStore, type SwitchedStore } from './helpers.js'

export const SIM_POLICY = {
  channels: { POS: { enabled: true, perTransactionMax: '2000' }, 'POS-Contactless': { enabled: true }, ATM: { enabled: false } },
  perCard: { count: 4, amount: '5000' },
  perInstance: { amount: '30000' },
  blockedMcc: ['7995']
}

export interface Violation { step: number, invariant: 'standin-within-caps' | 'standin-replayed-once', detail: string }
export interface SimResult { seed: number, steps: number, violations: Violation[], counts: Record<string, number> }

type Line = Parameters<typeof pendingOf>[0] extends Iterable<infer L> ? L : never

/** The journal's disk: it outlives every incarnation of the process; a kill loses the lines not yet flushed. */
class VolumeJournal implements StandInJournal {
  private queue: Array<{ line: Line, resolve: () => void }> = []
  private adopted = false
  dead = false
  constructor (private readonly disk: Line[]) {}
  get waiting (): number { return this.queue.length }
  async append (entry: StandInEntry): Promise<void> {
    await new Promise<void>((resolve) => { this.queue.push({ line: { a: 'add', ...structuredClone(entry) }, resolve }) })
  }

  /** fdatasync: what was queued is on the disk, and its writers are told */
  flush (): void {
    if (this.dead) return
    const q = this.queue
    this.queue = []
    for (const w of q) this.disk.push(w.line)
    for (const w of q) w.resolve()
  }

  void (e: EntryName): void { if (!this.dead) this.disk.push({ a: 'void', id: e.id, seq: e.seq, atMs: e.atMs }) }
  done (id: string): void { if (!this.dead) this.disk.push({ a: 'done', id }) }
  adopt (): Adopted {
    if (this.adopted) return { owed: [], replayed: [] }
    this.adopted = true
    return outageOf(this.disk)
  }

  /** as the file journal: emptied when nothing is owed or being written */
  endOutage (): void {
    if (!this.dead && this.queue.length === 0 && pendingOf(this.disk).length === 0) this.disk.length = 0
  }

  close (): void {}
  kill (): void {
    this.dead = true
    this.queue = []
  }
}

interface Answer { code: string, standIn: boolean }

export async function runStandInSim (seed: number, steps: number, makeStore: () => Promise<Store>): Promise<SimResult> {
  const rnd: Random = seededRandom(seed)
  const policy: StandInPolicy = parsePolicy(SIM_POLICY)
  const inner = await makeStore()
  const sw: SwitchedStore = switchedStore(inner)
  const rules = compileRuleFiles([{ name: '10-sim.json', text: JSON.stringify({ rules: [{ id: 'no-gambling-atm', when: { mcc: { eq: '7801' } }, then: { decline: '61' } }] }) }], { timezone: 'UTC' })
  if (!rules.ok) throw new Error('rules refused')
  const log = createLogger('silent')
  const violations: Violation[] = []
  const counts: Record<string, number> = {}
  const count = (k: string): void => { counts[k] = (counts[k] ?? 0) + 1 }

  const urns = ['USIM1', 'USIM2', 'USIM3']
  const OPENING = 20_000
  for (const u of urns) {
    await inner.putCustomer(u, {})
    await inner.credit(u, OPENING, `open-${u}`)
  }

  // two instances on one store, each with its journal's disk
  interface Instance { disk: Line[], journal: VolumeJournal, standIn: StandIn }
  const boot = (disk: Line[]): Instance => {
    const journal = new VolumeJournal(disk)
    const standIn = new StandIn({ policy, journal, store: sw.store, log, metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000 })
    standIn.start()
    return { disk, journal, standIn }
  }
  const instances: Instance[] = [boot([]), boot([])]
  /** a kill (the lines not flushed are lost, answers not given are never given), then a restart on the same disk */
  const restart = async (i: number): Promise<void> => {
    const old = instances[i] as Instance
    old.journal.kill()
    await old.standIn.stop()
    instances[i] = boot(old.disk)
  }
  const deps = (i: number): DecisionDeps => ({ store: sw.store, rules: () => rules.set, timezone: 'UTC', standIn: (instances[i] as Instance).standIn })
  let up = true
  let refSeq = 0
  /** every answer given, by urn and reference */
  const answers = new Map<string, { body: AuthRequest, answers: Answer[], approved?: AuthRequest }>()
  /** the stand-in approvals since the last point where the store held them all */
  let windows: Array<Array<{ card: string, amount: number }>> = [[], []]
  /** the references each instance approved in stand-in in this window (a repeat it answers from its journal counts once) */
  let approvedHere: Array<Set<string>> = [new Set(), new Set()]

  const key = (urn: string, ref: string): string => `${urn}\u0000${ref}`
  const debitOf = (b: AuthRequest): number => Number(b.transactionAmount)
  const newBody = (): AuthRequest => authBody({
    urn: pick(rnd, urns),
    last4Digits: pick(rnd, ['1111', '2222']),
    transactionReferenceNumber: `S${seed}-${++refSeq}`,
    transactionAmount: String(intBetween(rnd, 1, 2600)),
    channel: rnd() < 0.85 ? 'POS' : pick(rnd, ['ATM', 'POS-Contactless']),
    mcc: rnd() < 0.05 ? '7995' : rnd() < 0.03 ? '7801' : '5411'
  }) as unknown as AuthRequest

  /** one request under its deadline guard; `late` fires the guard before the journal is flushed */
  const request = (body: AuthRequest, late: boolean, inst: number): { done: Promise<Answer | null>, expire: () => void } => {
    const now = Date.now()
    let answered: ((a: Answer | null) => void) | null = null
    const done = new Promise<Answer | null>((resolve) => { answered = resolve })
    const give = (a: Answer | null): void => {
      const r = answered
      answered = null
      r?.(a)
    }
    const guard = new InFlight(now + 2000, () => { give({ code: '05', standIn: false }) })
    decide(body, { arrivedAtMs: now, deadlineAtMs: now + 2000, abort: guard }, deps(inst)).then((d) => {
      if (guard.done) return
      guard.release()
      give({ code: d.code, standIn: d.standIn === true })
    }, () => {
      if (guard.done) return
      guard.release()
      give({ code: '05', standIn: false })
    })
    return { done, expire: () => { if (late && !guard.done) guard.expire() } }
  }

  const record = (body: AuthRequest, a: Answer, inst: number): void => {
    const k = key(body.urn, body.transactionReferenceNumber)
    let e = answers.get(k)
    if (e === undefined) answers.set(k, e = { body, answers: [] })
    e.answers.push(a)
    count(`${a.code}${a.standIn ? ' standin' : ''}`)
    if (a.code !== '00') return
    if (a.standIn && !(approvedHere[inst] as Set<string>).has(k)) {
      if ((approvedHere[1 - inst] as Set<string>).has(k)) count('approved by both instances')
      ;(approvedHere[inst] as Set<string>).add(k);
      (windows[inst] as Array<{ card: string, amount: number }>).push({ card: `${body.urn}:${body.last4Digits}`, amount: debitOf(body) })
    }
    if (e.approved === undefined) {
      // the transaction approved under this reference: the first 00's
      e.approved = body
    } else if (debitOf(e.approved) !== debitOf(body)) {
      violations.push({ step: -1, invariant: 'standin-replayed-once', detail: `${body.transactionReferenceNumber} approved for ${debitOf(e.approved)} and again for ${debitOf(body)}` })
    }
  }

  const checkCaps = (step: number): void => {
    windows.forEach((window, inst) => { checkWindow(step, window, inst) })
  }
  const checkWindow = (step: number, window: Array<{ card: string, amount: number }>, inst: number): void => {
    const byCard = new Map<string, { n: number, amount: number }>()
    let total = 0
    for (const w of window) {
      const c = byCard.get(w.card) ?? { n: 0, amount: 0 }
      byCard.set(w.card, { n: c.n + 1, amount: c.amount + w.amount })
      total += w.amount
    }
    for (const [card, c] of byCard) {
      if (c.n > policy.perCard.count || c.amount > policy.perCard.amount) violations.push({ step, invariant: 'standin-within-caps', detail: `instance ${inst}, card ${card}: ${c.n} approvals, ${c.amount}` })
    }
    if (total > policy.perInstance.amount) violations.push({ step, invariant: 'standin-within-caps', detail: `instance ${inst}: ${total}` })
  }

  /** the store answers and every stand-in approval is in it: check the books, and start a new caps window */
  const checkBooks = async (step: number): Promise<void> => {
    const approved = [...answers.values()].flatMap((e) => e.approved !== undefined ? [{ body: e.approved }] : [])
    for (const e of approved) {
      const rec = await inner.getDecision(e.body.urn, e.body.transactionReferenceNumber)
      if (rec?.code !== '00') {
        violations.push({ step, invariant: 'standin-replayed-once', detail: `${e.body.transactionReferenceNumber} answered 00, the store holds ${rec?.code ?? 'nothing'}` })
        return
      }
    }
    for (const u of urns) {
      const mine = approved.filter((e) => e.body.urn === u)
      const expected = OPENING - mine.reduce((s, e) => s + debitOf(e.body), 0)
      const got = (await inner.getCustomer(u))?.available
      if (got !== expected) violations.push({ step, invariant: 'standin-replayed-once', detail: `${u}: balance ${String(got)}, expected ${expected} (${mine.length} approvals)` })
      const events = (await inner.readDecisionStream(u, 1_000_000)).filter((ev) => ev.type === 'decision.created' && ev.code === '00')
      const byRef = new Map<string, number>()
      for (const ev of events) byRef.set(ev.reference as string, (byRef.get(ev.reference as string) ?? 0) + 1)
      const twice = [...byRef].filter(([, n]) => n > 1)
      if (twice.length > 0 || byRef.size !== mine.length) violations.push({ step, invariant: 'standin-replayed-once', detail: `${u}: ${byRef.size} approval events for ${mine.length} approvals${twice.length > 0 ? `, twice: ${twice[0]?.[0] ?? ''}` : ''}` })
    }
    windows = [[], []]
    approvedHere = [new Set(), new Set()]
  }

  let step = 0
  for (; step < steps && violations.length === 0; step++) {
    const r = rnd()
    if (r < 0.12) {
      up = !up
      sw.set(up ? 'up' : 'down')
      count(up ? 'store up' : 'store down')
    } else if (r < 0.17) {
      await restart(intBetween(rnd, 0, 1))
      count('kill')
    } else {
      // a burst of concurrent requests: new ones, repeats of answered ones, a conflict now and then
      const n = intBetween(rnd, 1, 12)
      const sent: Array<{ body: AuthRequest, inst: number, done: Promise<Answer | null>, expire: () => void }> = []
      // a reference the store declined is not sent again: stand-in cannot know of that decline, and its
      // approval would be an exception of the replay (existing_decline), not a debit; the same for a
      // conflict, sent only while the store answers
      const repeatable = [...answers.values()].filter((e) => e.answers.every((a) => a.code === '00' || a.standIn))
      for (let i = 0; i < n; i++) {
        let body = newBody()
        const x = rnd()
        if (x < 0.2 && repeatable.length > 0) body = pick(rnd, repeatable).body
        else if (x < 0.23 && repeatable.length > 0 && up) body = { ...pick(rnd, repeatable).body, transactionAmount: '7' }
        // a repeat may reach the other instance, which knows nothing of the first answer
        const inst = intBetween(rnd, 0, 1)
        sent.push({ body, inst, ...request(body, rnd() < 0.05, inst) })
      }
      // every request answered by the store, or waiting for the journal's flush
      let answered = 0
      for (const x of sent) void x.done.then(() => { answered++ })
      const waiting = (): number => instances.reduce((sum, x) => sum + x.journal.waiting, 0)
      for (let i = 0; i < 2000 && answered + waiting() < sent.length; i++) await new Promise((resolve) => setTimeout(resolve, i < 5 ? 0 : 1))
      for (const s of sent) s.expire()
      // one instance may be killed before its flush: those waiting on it are never answered
      const killed = rnd() < 0.05 ? intBetween(rnd, 0, 1) : -1
      if (killed >= 0) {
        (instances[killed] as Instance).journal.kill()
        count('kill mid-flush')
      }
      for (const x of instances) x.journal.flush()
      const given = await Promise.all(sent.map(async (s) => s.inst === killed ? await Promise.race([s.done, Promise.resolve(null)]) : await s.done))
      sent.forEach((s, i) => { const a = given[i]; if (a != null) record(s.body, a, s.inst) })
      if (killed >= 0) await restart(killed)
    }
    checkCaps(step)
    if (up) {
      for (const x of instances) await x.standIn.replayNow()
      await checkBooks(step)
    }
  }
  if (violations.length === 0) {
    sw.set('up')
    for (const x of instances) await x.standIn.replayNow()
    await checkBooks(step)
  }
  for (const x of instances) await x.standIn.stop()
  return { seed, steps: step, violations, counts }
}
