// The invariants, checked after every step (on what the step touched) and at the end (on everything),
// against the model and the parties' books; never against the store's own answers.
import type { HeldMoveRecord } from '../../../src/moves/held-move.js'
import type { TransferRecord } from '../../../src/moves/transfers.js'
import type { UnloadRecord } from '../../../src/moves/unloads.js'
import type { LoadRecord } from '../../../src/moves/loads.js'
import { STALE_RECONCILE } from '../../../src/moves/answer.js'
import { LIFECYCLE_TTL_SECONDS } from '../../../src/store/types.js'
import type { Delivered, SimContext } from './context.js'
import type { Job, LoadJob, TransferJob, UnloadJob } from './clients.js'
import type { PartyBooks } from './fake-parties.js'
import { MODEL_LIMITS, windowId, type Model, type ModelDecision } from './model.js'
import type { RawState } from './raw-state.js'
import { sliceSums } from '../../../src/store/limit-totals.js'
import { settlementFor } from '../../../src/settlement/for-store.js'
import { lifecycleFailedId, ownerOf } from '../../../src/settlement/lifecycle-failed.js'

export interface CheckEnv {
  sim: SimContext
  raw: RawState
  books: PartyBooks
  /** transfers left held for an operator to reconcile on the platform */
  reconcile: Set<string>
}

function sorted (xs: string[]): string[] {
  return [...xs].sort()
}

export async function checkCustomer (env: CheckEnv, urn: string): Promise<void> {
  const { sim } = env
  const m = sim.model.customers.get(urn)
  const c = await sim.store.getCustomer(urn)
  if (m === undefined) {
    if (c !== null) sim.violation('no-state-shared', `customer ${urn} exists in the store only`)
    return
  }
  if (c === null) { sim.violation('balance', `customer ${urn} missing from the store`); return }
  if (c.available !== m.available) sim.violation('balance', `customer ${JSON.stringify(urn)}: store ${c.available}, model ${m.available}`)
  if (sim.opts.settlement === 'holds') {
    // every approval is a hold: the customer's held is what its approvals still hold, each once
    let held = 0
    for (const d of sim.model.decisions.values()) if (d.urn === urn && d.code === '00' && d.hold === true) held += d.held
    for (const o of sim.model.orphanHolds) if (o.urn === urn) held += o.held
    if (c.held !== held) sim.violation('balance', `customer ${JSON.stringify(urn)} held: store ${c.held}, model ${held}`)
  }
  // below zero only by a stand-in replay (debited whatever the balance), and only until it is back at zero or above
  if (c.available >= 0) sim.model.belowZero.delete(urn)
  else if (Number.isNaN(c.available) || !sim.model.belowZero.has(urn)) sim.violation('nothing-negative', `customer ${JSON.stringify(urn)} available ${c.available}`)
  if (c.status !== m.status) sim.violation('customer-state', `customer ${urn}: store ${c.status}, model ${m.status}`)
  const cards = JSON.stringify(sorted(Object.entries(c.cards).map(([k, v]) => `${k}=${v}`)))
  const mcards = JSON.stringify(sorted([...m.cards].map(([k, v]) => `${k}=${v}`)))
  if (cards !== mcards) sim.violation('customer-state', `customer ${urn} cards: store ${cards}, model ${mcards}`)
}

export async function checkWindows (env: CheckEnv, urn: string, last4s: Iterable<string>): Promise<void> {
  const { sim, raw } = env
  const now = sim.clock.now()
  const scopes: Array<[string, 'urn' | 'card', string]> = []
  for (const l of MODEL_LIMITS) {
    if (l.per === 'urn') scopes.push([l.ruleId, 'urn', '0000'])
    else for (const last4 of last4s) scopes.push([l.ruleId, 'card', last4])
  }
  for (const [ruleId, per, last4] of scopes) {
    const l = MODEL_LIMITS.find((x) => x.ruleId === ruleId)
    if (l === undefined) continue
    const expected = sorted(sim.model.windowEntries(windowId(ruleId, urn, per === 'card' ? last4 : null), l.retainMs, now)
      .map((e) => `${e.amount}|${e.reference}@${e.atMs}`))
    const entries = await raw.window(urn, last4, ruleId, per)
    const got = sorted(entries.filter((e) => e.score >= now - l.retainMs).map((e) => `${e.member}@${e.score}`))
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      sim.violation('windows-hold-approved-unreleased', `${ruleId} ${per} ${JSON.stringify(urn)}${per === 'card' ? ' ' + last4 : ''}: store ${JSON.stringify(got)}, model ${JSON.stringify(expected)}`)
    }
    // the running totals the amount limits read: each slice's total is the sum of the window's entries in it. A
    // count is read from the set, so a count limit's window may keep none (Redis keeps none; the memory store
    // keeps them), but what it keeps is exact
    const kept = await raw.totals(urn, last4, ruleId, per)
    const totals = JSON.stringify(sortedEntries(kept))
    const sums = JSON.stringify(sortedEntries(sliceSums(entries)))
    if (totals !== sums && !(l.measure === 'count' && Object.keys(kept).length === 0)) {
      sim.violation('limit-totals-exact', `${ruleId} ${per} ${JSON.stringify(urn)}${per === 'card' ? ' ' + last4 : ''}: totals ${totals}, the entries' sums ${sums}`)
    }
  }
}

/** The answers of the request that made the decision (a conflicting request's 05 is not about its money). */
function answersOf (sim: SimContext, key: string, d: ModelDecision | undefined): Delivered[] {
  const all = (sim.answers.get(key) ?? []).filter((a) => a.via !== 'refused' && a.reason !== 'conflict')
  return d === undefined ? all : all.filter((a) => a.debit === d.debit && a.last4 === d.last4)
}

export async function checkDecision (env: CheckEnv, key: string): Promise<void> {
  const { sim } = env
  const [urn, reference] = JSON.parse(key) as [string, string]
  const d = sim.model.decision(urn, reference)
  const rec = await sim.store.getDecision(urn, reference)
  if (d === undefined) {
    if (rec !== null) sim.violation('no-state-shared', `decision ${key} exists in the store only (code ${rec.code}, held ${rec.held})`)
  } else if (rec === null) {
    sim.violation('decision-kept', `decision ${key} (code ${d.code}, held ${d.held}) is gone from the store`)
  } else {
    const got = { code: rec.code, held: Number(rec.held), released: Number(rec.released) }
    const want = { code: d.code, held: d.held, released: d.released }
    if (JSON.stringify(got) !== JSON.stringify(want)) sim.violation('decision-agrees', `decision ${key}: store ${JSON.stringify(got)}, model ${JSON.stringify(want)}`)
    if (!(got.held >= 0) || !(got.released >= 0)) sim.violation('nothing-negative', `decision ${key}: ${JSON.stringify(got)}`)
  }
  checkControlOf(sim, key, d)
  // what the platform last heard decides where the money is (while the decision is kept)
  if (d === undefined && sim.model.forgotten.has(key)) return
  const answers = answersOf(sim, key, d)
  const last = answers[answers.length - 1]
  if (last === undefined) return
  const approved = d !== undefined && d.code === '00'
  if (last.via === 'standin' && last.code === '00' && sim.standIn !== null) {
    // a stand-in approval not replayed yet holds nothing so far (standin-replayed-once follows it)
    if (sim.standIn.owed.has(key)) return
    // replayed onto another answer the store already held: not debited, left to an operator (standin.md)
    if (sim.standIn.exceptions.has(key) && !approved) { env.reconcile.add(`standin:${key}`); return }
  }
  // attempts answered at the same instant (concurrent duplicates) raced: the platform may act on either
  const raced = answers.filter((a) => a.atMs === last.atMs)
  if (last.code === '00' && !approved && !raced.some((a) => a.code !== '00')) {
    sim.violation('every-00-held-once', `${key} answered 00 (step ${last.step}) but the model decision is ${d === undefined ? 'absent' : `${d.code} ${d.reason}`}`)
  }
  // a reversal may have given the money back already; what must not be is money still held for a 05
  if (last.code !== '00' && approved && d.held > 0 && !raced.some((a) => a.code === '00')) {
    sim.violation('every-05-holds-nothing', `${key} last answered ${last.code} via ${last.via} (step ${last.step}) but ${d.held} is held (attempts: ${answers.map((a) => `${a.code}/${a.via}@${a.step}`).join(' ')})`)
  }
  // holds mode: what a statement posted of the hold is neither held nor released
  const posted = d?.posted ?? 0
  // a stand-in approval of an unknown urn is recorded holding nothing
  if (approved && d.standIn === true && !sim.model.customers.has(urn)) return
  if (approved && d.held + d.released + posted !== d.debit) sim.violation('every-00-held-once', `${key}: held ${d.held} + released ${d.released} + posted ${posted} != debit ${d.debit}`)
}

/** A repeat answered by the store says what the platform heard last from the store for that reference. */
export function checkReplay (sim: SimContext, key: string, before: Delivered | undefined, now: Delivered): void {
  // a repeat decided anew (the first decision past its retention) is a new transaction
  if (before === undefined || before.via !== 'store' || now.via !== 'store' || !now.replayed) return
  if (before.debit !== now.debit || before.last4 !== now.last4 || before.reason === 'conflict') return
  // decided again since (the first decision past its retention, and a request nobody heard the answer to)
  const [urn, reference] = JSON.parse(key) as [string, string]
  const d = sim.model.decision(urn, reference)
  if (d !== undefined && d.atMs > before.atMs) return
  if (now.code !== before.code) sim.violation('replay-returns-first-answer', `${key}: answered ${before.code} (step ${before.step}), the repeat ${now.code}`)
}

/** The net debit of a held move's holds (a hold given back and taken again is the next number). */
function heldNet (m: Model, kind: 'transfer' | 'unload', urn: string, id: string): number {
  return m.heldNet(urn, kind, id)
}

function recordState (rec: HeldMoveRecord | null): string {
  return rec === null ? 'none' : `${rec.status} hold ${rec.hold.state}`
}

/**
 * Left for an operator, as the README allows: FAILED with a `reconcile` note (the platform refused a repeat
 * as a duplicate, or a store operation stayed unconfirmed past its reference's retention), whether the
 * record still says so or the client was told so before the record expired.
 */
function leftToOperator (rec: HeldMoveRecord | null, job: TransferJob | UnloadJob): boolean {
  if (rec !== null) return rec.status === 'FAILED' && rec.reconcile !== undefined
  return job.phase === 'gave-up' && (job.last as { reconcile?: string } | null)?.reconcile !== undefined
}

/**
 * `lifecycle-queued`: a record FAILED with a reconcile note whose call told the client so is in the operator's
 * queue, as a lifecycle_failed exception (a save whose reply was lost told the client nothing: its repeat
 * queues it when it answers).
 */
async function checkQueued (env: CheckEnv, kind: 'load' | 'transfer' | 'unload', id: string, rec: { status: string, reconcile?: string, createdAtMs: number } | null, last: unknown): Promise<void> {
  if (rec?.status !== 'FAILED' || rec.reconcile === undefined || (last as { reconcile?: string } | null)?.reconcile === undefined) return
  const owner = ownerOf(kind, rec as unknown as Parameters<typeof ownerOf>[1])
  if (owner === undefined) return
  const x = await settlementFor(env.sim.store).getException(lifecycleFailedId(owner, kind, id, rec.createdAtMs))
  if (x?.kind !== 'lifecycle_failed') env.sim.violation('lifecycle-queued', `${kind} ${id} is FAILED with a reconcile note, and told the client so; no lifecycle_failed exception`)
}

/**
 * The card-lifecycle page's known limits: a settled record is forgotten 30 days after its last change, and
 * a repeat after that is a new call: its first send meets the platform's 1054 and is DECLINED, the new hold
 * given back. The record then says DECLINED of money the first call moved; the money is checked as any.
 */
function repeatOfForgotten (job: TransferJob | UnloadJob, rec: HeldMoveRecord): boolean {
  return job.outlived === true && rec.upstream?.code === '1054'
}

/**
 * A duplicate the platform reported must be this operation's own earlier call: extauth keeps transfers and
 * unloads apart, the platform has one clientTxnId space for both.
 */
function checkIdSpace (env: CheckEnv, job: TransferJob | UnloadJob, rec: HeldMoveRecord | null): void {
  const { kind, id } = job
  const owner = env.books.clientTxnIds.get(id)
  if (rec?.upstream?.code !== '1054' || owner === undefined || owner === kind) return
  // extauth keeps a record LIFECYCLE_TTL_SECONDS after its last change, and no longer knows the id was used
  // once it has expired: the unload is sent and meets 1054, read as any 1054 is (the card-lifecycle page):
  // DECLINED with the hold given back (none, or releasing until the next call) when no earlier send of the
  // unload may have left; FAILED with reconcile, the amount held, when one may have (its answer lost). Only
  // those outcomes, only after that time; the money of either is checked as any unload's.
  const t = job.kind === 'unload' ? job.reuses?.lastCallEndMs : undefined
  // and the other way round: a transfer whose own record expired (its client back after that time) while an
  // unload took its id on the platform meets the unload's 1054 as a new call would
  // (the transfer's record expires 30 days after its latest write, which may come before its call ended: the
  // unload's record was made after the transfer's had expired)
  const transferWrite = env.sim.lifecycleWrites.get(`transfer:${id}`)
  const unloadWrite = env.sim.lifecycleWrites.get(`unload:${id}`)
  const forgotten = (t !== undefined && job.kind === 'unload' && job.firstCallMs !== undefined && job.firstCallMs - t >= LIFECYCLE_TTL_SECONDS * 1000) ||
    (job.kind === 'unload' && transferWrite !== undefined && unloadWrite !== undefined && unloadWrite.first - transferWrite.last >= LIFECYCLE_TTL_SECONDS * 1000) ||
    (job.kind === 'transfer' && job.outlived === true)
  const declined = rec.status === 'DECLINED' && (rec.hold.state === 'none' || rec.hold.state === 'releasing')
  if (forgotten && (declined || (rec.status === 'FAILED' && rec.reconcile !== undefined))) return
  env.sim.violation('own-duplicate', `${kind} ${id} was answered 1054 as a duplicate of a ${owner} that used its clientTxnId; the platform never took this ${kind}: record ${recordState(rec)}`)
}

/**
 * A lifecycle record agrees with the money moved, and no money is made: a credit only for a charged card or a
 * moved transfer, a sender never debited more than once. `final`: every client has finished, so a card
 * charged is credited and a moved transfer is complete.
 */
export async function checkJob (env: CheckEnv, job: Job, final: boolean): Promise<void> {
  if (job.kind === 'load') await checkLoad(env, job, final)
  else if (job.kind === 'transfer') await checkTransfer(env, job, final)
  else await checkUnload(env, job, final)
}
async function checkLoad (env: CheckEnv, job: LoadJob, final: boolean): Promise<void> {
  const { sim, books } = env
  const movedIn = sim.model.movedBy(job.urn, 'credit', `load:${job.ref}`)
  const credited = movedIn === 0 ? undefined : movedIn
  const party = books.loads.get(job.ref)
  const charged = party?.charged === true
  const rec = await sim.store.getLifecycle<LoadRecord>('load', job.ref)
  if (credited !== undefined && (!charged || credited !== job.amount)) sim.violation('lifecycle-agrees', `load ${job.ref}: credited ${credited} but the card charged: ${charged}`)
  if (rec?.status === 'LOADED' && credited === undefined) sim.violation('lifecycle-agrees', `load ${job.ref} LOADED without its credit`)
  // left to an operator (the README's reconcile note), while the record says so or after it expired
  const note = rec !== null ? (rec.status === 'FAILED' ? rec.reconcile : undefined) : (job.phase === 'gave-up' ? (job.last as { reconcile?: string } | null)?.reconcile : undefined)
  if (note !== undefined) {
    env.reconcile.add(`load:${job.ref}`)
    await checkQueued(env, 'load', job.ref, rec, job.last)
    return
  }
  if (job.phase === 'gave-up' && charged && credited === undefined) {
    sim.violation('charged-card-credited', `load ${job.ref}: the card was charged ${job.amount}, and extauth answered ${JSON.stringify(job.last)}, which tells the client not to repeat; it is never credited`)
  }
  if (final && charged && credited === undefined) sim.violation('charged-card-credited', `load ${job.ref}: card charged, not credited at the end (record ${rec?.status ?? 'none'}, last answer ${JSON.stringify(job.last)})`)
}

async function checkTransfer (env: CheckEnv, job: TransferJob, final: boolean): Promise<void> {
  const { sim, books } = env
  const m = sim.model
  const heldAll = heldNet(m, 'transfer', job.fromUrn, job.id)
  const receivedAll = m.movedBy(job.toUrn, 'credit', `transfer:${job.id}:receive`)
  // the record speaks of this life of the id only (a repeat after its settled record expired is a new call)
  const held = heldAll - (job.lifeBase?.held ?? 0)
  const received = receivedAll - (job.lifeBase?.received ?? 0)
  const party = books.transfers.get(job.id)
  const moved = party?.outcome === 'moved'
  const rec = await sim.store.getLifecycle<TransferRecord>('transfer', job.id)
  const state = `sender net ${-held}, receiver +${received}, platform ${party?.outcome ?? 'never asked'}, record ${recordState(rec)}`
  if (held !== 0 && held !== job.amount) sim.violation('lifecycle-agrees', `transfer ${job.id} (${job.amount}): ${state}`)
  if (received !== 0 && !moved) sim.violation('lifecycle-agrees', `transfer ${job.id}: receiver credited, the platform did not move it: ${state}`)
  if (received !== 0 && held !== job.amount) sim.violation('money-not-created', `transfer ${job.id} (${job.amount}): receiver credited while the sender is not debited: ${state}`)
  if (rec?.status === 'TRANSFERRED' && !(moved && held === job.amount && received === job.amount)) sim.violation('lifecycle-agrees', `transfer ${job.id} TRANSFERRED: ${state}`)
  // a duplicate refused asks an operator to release or complete a hold: there must be one, and nothing done yet
  // (not so a record left unconfirmed past the money references' horizon: extauth no longer knows, and says so)
  if (rec?.status === 'FAILED' && rec.upstream?.code === '1054' && rec.reconcile !== STALE_RECONCILE && (held !== job.amount || received !== 0)) sim.violation('lifecycle-agrees', `transfer ${job.id} FAILED (held for reconciliation): ${state}`)
  if (rec?.status === 'DECLINED' && rec.hold.state === 'none' && (held !== 0 || received !== 0) && !repeatOfForgotten(job, rec)) sim.violation('lifecycle-agrees', `transfer ${job.id} DECLINED: ${state}`)
  // the README's one exception: the platform took it, its answer was lost, a repeat is refused as a duplicate;
  // the amount stays held and the record says to reconcile it on the platform
  checkIdSpace(env, job, rec)
  if (leftToOperator(rec, job)) {
    env.reconcile.add(job.id)
    await checkQueued(env, 'transfer', job.id, rec, job.last)
    return
  }
  if (job.phase === 'gave-up' && moved && receivedAll === 0) {
    sim.violation('transfer-settled', `transfer ${job.id} (${job.amount}) moved on the platform, and extauth answered ${JSON.stringify(job.last)}, which tells the client not to repeat: ${state}`)
  }
  if (final) {
    if (moved && receivedAll !== job.amount) sim.violation('transfer-settled', `transfer ${job.id} (${job.amount}) moved on the platform, not here at the end (last answer ${JSON.stringify(job.last)}): ${state}`)
    if (!moved && heldAll !== 0) sim.violation('transfer-settled', `transfer ${job.id} (${job.amount}) not moved on the platform, the sender's hold stays at the end (last answer ${JSON.stringify(job.last)}): ${state}`)
  }
}

/**
 * An unload: extauth's balance moved exactly as the platform's books say the wallet did (the amount and the
 * fee, once, only when the platform took it), and a record that says what the money did.
 */
async function checkUnload (env: CheckEnv, job: UnloadJob, final: boolean): Promise<void> {
  const { sim, books } = env
  const heldAll = heldNet(sim.model, 'unload', job.urn, job.id)
  // the record speaks of this life of the id only, as a transfer's
  const held = heldAll - (job.lifeBase?.held ?? 0)
  const party = books.unloads.get(job.id)
  const moved = party?.outcome === 'moved'
  const total = job.amount + job.fee
  const rec = await sim.store.getLifecycle<UnloadRecord>('unload', job.id)
  const state = `extauth net ${-held}, platform ${party === undefined ? 'never asked' : `${party.outcome} ${party.total}`}, record ${recordState(rec)}`
  if (held !== 0 && held !== total) sim.violation('lifecycle-agrees', `unload ${job.id} (${total}): ${state}`)
  if (party !== undefined && (party.urn !== job.urn || party.total !== total)) sim.violation('lifecycle-agrees', `unload ${job.id}: the platform unloaded another wallet or amount: ${state}`)
  if (rec?.status === 'UNLOADED' && !(moved && held === total)) sim.violation('lifecycle-agrees', `unload ${job.id} UNLOADED: ${state}`)
  if (rec?.status === 'DECLINED' && rec.hold.state === 'none' && held !== 0 && !repeatOfForgotten(job, rec)) sim.violation('lifecycle-agrees', `unload ${job.id} DECLINED: ${state}`)
  if (rec?.status === 'FAILED' && rec.upstream?.code === '1054' && rec.reconcile !== STALE_RECONCILE && held !== total) sim.violation('lifecycle-agrees', `unload ${job.id} FAILED (held for reconciliation): ${state}`)
  checkIdSpace(env, job, rec)
  if (leftToOperator(rec, job)) {
    env.reconcile.add(`unload:${job.id}`)
    await checkQueued(env, 'unload', job.id, rec, job.last)
    return
  }
  if (job.phase === 'gave-up' && moved !== (heldAll === total)) {
    sim.violation('unload-settled', `unload ${job.id} (${total}), and extauth answered ${JSON.stringify(job.last)}, which tells the client not to repeat: ${state}`)
  }
  if (final && (moved ? heldAll !== total : heldAll !== 0)) {
    sim.violation('unload-settled', `unload ${job.id} (${total}): the balance did not move as the platform's at the end (last answer ${JSON.stringify(job.last)}): ${state}`)
  }
}

/** An approved authorization passed the card's control as it stood when the decision was made. */
export function checkControlOf (sim: SimContext, key: string, d: ModelDecision | undefined): void {
  if (d === undefined || d.code !== '00' || d.answeredOnDeadline || d.control === null) return
  const c = d.control
  if (!c.enabled) sim.violation('controls-hold', `${key} approved while its control was off`)
  if (c.perTransactionMax !== null && d.debit > c.perTransactionMax) sim.violation('controls-hold', `${key} approved ${d.debit} over perTransactionMax ${c.perTransactionMax}`)
  if (c.dailyMax !== null && c.totalBefore + d.debit > c.dailyMax) sim.violation('controls-hold', `${key} approved ${d.debit} with ${c.totalBefore} earlier that day, over dailyMax ${c.dailyMax}`)
}

function sortedEntries (r: Record<string, number>): Array<[string, number]> {
  return Object.entries(r).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
}
