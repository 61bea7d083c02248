// Money the prepaid platform moves out of a customer's wallet (a transfer's sender, an unload): held here
// first, so it cannot be spent meanwhile, then the platform is asked, and its answer settles the hold.
// Transfers and unloads share this: the record, the lock, the hold and the reading of the answer.
//
// The hold is a store debit and its release a store credit, each idempotent on a reference that names
// the hold (`<kind>:<id>:hold:<seq>`, `<kind>:<id>:release:<seq>`). The record names a money operation
// before it is made (`taking`, `releasing`) and confirms it after (`held`, `none`): whatever call fails or
// whenever the process stops, the next call of the same reference first completes the operation the
// record names, and the store's reference makes it happen once. So the record and the money never
// disagree for longer than until that next call.
import { createHash } from 'node:crypto'
import { type Failed, isAdapterBadRequest, type Ok, type PrepaidDeclined, uncertainDecline } from '../adapters/index.js'
import { LifecycleStale, StoreRejection } from '../errors.js'
import type { Store } from '../store/types.js'
import { MONEY_REFERENCE_HORIZON_MS, STALE_RECONCILE, type LifecycleAnswer, type LifecycleStatus, type Upstream } from './answer.js'
import { LifecycleConflict, LifecycleNotFound } from './errors.js'
import { type FailedHook, LIFECYCLE_LOCK_TTL_MS_DEFAULT, RecordBook, type RenewLock, type Revised } from './records.js'
import { readHeldMove, sameCall, sendsSoFar } from './earlier-formats.js'

export type HoldState =
  /** nothing held (never taken, or given back) */
  | 'none'
  /** the debit of hold `seq` may or may not have been made: the next call makes it (once) */
  | 'taking'
  | 'held'
  /** the credit giving hold `seq` back may or may not have been made: the next call makes it (once) */
  | 'releasing'
  /** the platform moved the money: the hold is the final debit */
  | 'spent'

export interface Hold {
  urn: string
  /** minor units, digit string */
  amount: string
  /** numbers the holds, so a hold given back and taken again is a new idempotent debit */
  seq: number
  state: HoldState
}

export interface HeldMoveRecord extends Revised {
  clientTxnId: string
  /**
   * PENDING: not settled with the platform yet; AUTHORIZED: the platform said 00 and the store is not
   * finished yet; the done word, DECLINED: final; FAILED: final, the outcome must be checked on the
   * platform (`reconcile`).
   */
  status: LifecycleStatus
  upstream: Upstream | null
  ledgerTransactionId: string | null
  hold: Hold
  /**
   * sends to the platform that may have left, counted before each is made and taken off again when it
   * certainly did not leave (absent on records from before the count: unknown, at least one; see
   * earlier-formats.ts). A 1054 on the first send is not about a send of ours.
   */
  sends?: number
  /**
   * AUTHORIZED: whether the store's steps after the platform's 00 (`complete`, then the done word) may have
   * begun. Saved false with AUTHORIZED and true before they begin, so a repeat however late knows that
   * false means they were never made (absent on records from before it: unknown).
   */
  completing?: boolean
  /** the platform's answer token, kept until it is read: a repeat decrypts it again and never re-sends */
  responseToken: string | null
  reconcile?: string
  /** why extauth itself declined, before asking the platform */
  reason?: 'INSUFFICIENT_FUNDS'
  /**
   * a hash of the values that make the call: a repeat must carry the same ones. The values themselves
   * are not kept (a caller may put anything in an account number); the repeat brings them again.
   */
  fingerprint: string
  /** a record of an earlier format whose kept values allow a second reading of the call (earlier-formats.ts) */
  fingerprintAlso?: string
  createdAtMs: number
  updatedAtMs: number
}

/** The fingerprint of a call's values (sha256 of their JSON). */
export function fingerprintOf (values: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(values)).digest('hex')
}

/** What every transfer and unload answer says about its money. */
export interface HeldMoveAnswer extends LifecycleAnswer {
  clientTxnId: string
  ledgerTransactionId?: string | null
  /** the amount stays held until a repeat of the call settles it */
  held?: boolean
  reconcile?: string
  reason?: 'INSUFFICIENT_FUNDS'
  failure?: string
}

export interface HeldMoveSteps<R extends HeldMoveRecord> {
  /** Encrypt and the platform's call; sent:false on a failure when the call certainly did not leave */
  send: () => Promise<Ok<{ responseToken: string }> | PrepaidDeclined | Failed>
  /** restarts the lock before each call to the platform (RecordBook.locked's) */
  renew?: RenewLock
  /** Decrypt the kept answer token and read it */
  read: (responseToken: string) => Promise<Ok<{ ledgerTransactionId?: string }> | PrepaidDeclined | Failed>
  /** what the store still does after the platform's 00, idempotently (a transfer credits its receiver) */
  complete: (r: R) => Promise<void>
}

const MOVED_UNHELD = 'the platform answered a send of this clientTxnId after the held amount had been given back, and the ' +
  'customer no longer has it available: check the outcome there and settle the customer\'s balance by hand'

const RECONCILE = 'the platform reports this clientTxnId as already used; check its outcome there, then release or complete the held amount'

function isInsufficient (err: unknown): boolean {
  return err instanceof StoreRejection && err.word === 'INSUFFICIENT_FUNDS'
}

export class HeldMoves<R extends HeldMoveRecord> {
  private readonly records: RecordBook<R>

  constructor (
    private readonly store: Store,
    readonly kind: 'transfer' | 'unload',
    private readonly done: 'TRANSFERRED' | 'UNLOADED',
    private readonly clock: () => number,
    lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT,
    onFailed?: FailedHook
  ) {
    this.records = new RecordBook<R>(store, kind, lockTtlMs, (r) => this.settled(r), (r) => readHeldMove(kind, r), onFailed)
  }

  /**
   * Whether the record may expire after its lifetime: nothing of the customer's is held or on its way
   * (hold `none`, or `spent` by the platform's move) and no party is owed a step: PENDING with nothing held
   * (no send that may have left), DECLINED with the hold given back, or the done word. AUTHORIZED (the
   * platform moved, the store is not finished), any hold `taking`/`held`/`releasing`, and FAILED (left to
   * an operator with its reconcile note, its money unsettled) are kept until a later save settles them:
   * forgotten, a repeat would find no record and take the amount again.
   */
  settled (r: HeldMoveRecord): boolean {
    if (r.status === 'AUTHORIZED' || r.status === 'FAILED') return false
    return r.hold.state === 'none' || r.hold.state === 'spent'
  }

  /** the store reference of a hold's debit or of its release's credit */
  reference (r: HeldMoveRecord, op: 'hold' | 'release', seq = r.hold.seq): string {
    return `${this.kind}:${r.clientTxnId}:${op}:${seq}`
  }

  isFinal (r: HeldMoveRecord): boolean {
    return r.status === this.done || r.status === 'DECLINED' || r.status === 'FAILED'
  }

  async find (id: string): Promise<R | null> {
    return await this.records.find(id)
  }

  async get (id: string): Promise<R> {
    const r = await this.find(id)
    if (r === null) throw new LifecycleNotFound(this.kind === 'transfer' ? 'TRANSFER_NOT_FOUND' : 'UNLOAD_NOT_FOUND', `no ${this.kind} ${id}`)
    return r
  }

  /** Saves only over the record as read: a call that outlived its lock cannot undo a newer call's work. */
  async save (r: R, patch: Partial<R>): Promise<R> {
    return await this.records.save(r.clientTxnId, r, { ...r, ...patch, updatedAtMs: this.clock() })
  }

  /** A new record, saved before the platform is first asked: a repeat after a lost answer knows it asked. */
  async create (fields: Omit<R, 'status' | 'upstream' | 'ledgerTransactionId' | 'hold' | 'responseToken' | 'createdAtMs' | 'updatedAtMs' | 'sends'>, hold: { urn: string, amount: number }): Promise<R> {
    const now = this.clock()
    const r = {
      ...fields,
      status: 'PENDING',
      sends: 0,
      upstream: null,
      ledgerTransactionId: null,
      hold: { urn: hold.urn, amount: String(hold.amount), seq: 0, state: 'none' },
      responseToken: null,
      createdAtMs: now,
      updatedAtMs: now
    } as unknown as R
    return await this.records.save(r.clientTxnId, null, r)
  }

  async locked<T> (id: string, fn: (renew: RenewLock) => Promise<T>): Promise<T> {
    return await this.records.locked(id, fn)
  }

  /**
   * The platform keeps one set of clientTxnIds for transfers and unloads: an id one kind has used is
   * refused for the other before anything is held (the platform would answer 1054).
   */
  async refuseOtherKind (id: string): Promise<void> {
    const other = this.kind === 'transfer' ? 'unload' : 'transfer'
    if (await this.store.getLifecycle(other, id) !== null) {
      throw new LifecycleConflict('REFERENCE_CONFLICT', `clientTxnId ${id} is already used for ${other === 'unload' ? 'an unload' : 'a transfer'}`)
    }
  }

  /**
   * A repeat with other values than the first call's is a conflict, never a new operation. `keptAgree`: the
   * values every format of the record kept (parties, amount) are the repeat's.
   */
  conflict (r: HeldMoveRecord, fingerprint: string, keptAgree: boolean): void {
    if (!sameCall(r, fingerprint, keptAgree)) throw new LifecycleConflict('REFERENCE_CONFLICT', `${this.kind} ${r.clientTxnId} exists with other values`)
  }

  /** The answer fields every transfer and unload carries. */
  answer (r: HeldMoveRecord, failed?: Failed): HeldMoveAnswer {
    const held = r.hold.state === 'held' || r.hold.state === 'taking'
    return {
      clientTxnId: r.clientTxnId,
      status: failed !== undefined ? 'FAILED' : r.status,
      upstream: failed !== undefined ? null : r.upstream,
      ledgerTransactionId: r.ledgerTransactionId,
      ...(held ? { held: true } : {}),
      ...(r.reconcile !== undefined ? { reconcile: r.reconcile } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.status === 'FAILED' && failed === undefined ? { retryable: false } : {}),
      ...(failed !== undefined ? { retryable: failed.retryable, failure: failed.reason } : {})
    }
  }

  /** Completes the money operation the record names but has not confirmed. */
  private async settleHold (r: R): Promise<R> {
    const h = r.hold
    if (h.state === 'taking') {
      try {
        await this.store.debit(h.urn, Number(h.amount), this.reference(r, 'hold'), { type: 'funds.debited', details: { lifecycle: this.kind, clientTxnId: r.clientTxnId, step: 'hold' } })
      } catch (err) {
        if (isInsufficient(err)) return await this.save(r, { hold: { ...h, state: 'none' } } as Partial<R>)
        throw err
      }
      return await this.save(r, { hold: { ...h, state: 'held' } } as Partial<R>)
    }
    if (h.state === 'releasing') {
      await this.store.credit(h.urn, Number(h.amount), this.reference(r, 'release'), { type: 'funds.credited', details: { lifecycle: this.kind, clientTxnId: r.clientTxnId, step: 'release' } })
      return await this.save(r, { hold: { ...h, state: 'none' } } as Partial<R>)
    }
    return r
  }

  /** Gives the hold back, recording the intent (and `patch`) first. */
  /**
   * The send just counted never reached the platform: it is not counted. The hold goes back only when no
   * earlier send may have reached the platform either: one whose answer was lost or timed out may have
   * moved the money, and a repeat must settle that first.
   */
  private async unsent (r: R): Promise<R> {
    const earlier = sendsSoFar(r) - 1
    if (earlier > 0) return await this.save(r, { sends: earlier } as Partial<R>)
    return await this.release(r, { sends: 0 } as Partial<R>)
  }

  private async release (r: R, patch: Partial<R>): Promise<R> {
    if (r.hold.state !== 'held') return await this.save(r, patch)
    return await this.settleHold(await this.save(r, { ...patch, hold: { ...r.hold, state: 'releasing' } }))
  }

  /**
   * Records the answer token. Should that fail, the answer is in hand and is read all the same; the
   * record then lacks the token (`kept` false), and a failed read tries once more to keep it. A record
   * changed by a newer call is not ours to write: that is thrown.
   */
  private async keepToken (r: R, token: string): Promise<{ r: R, kept: boolean }> {
    try {
      return { r: await this.save(r, { responseToken: token } as Partial<R>), kept: true }
    } catch (err) {
      if (err instanceof LifecycleStale) throw err
      // the save may have been made with its reply lost: the revision to save over next is the stored one
      const stored = await this.find(r.clientTxnId).catch(() => null)
      if (stored !== null && stored.rev === (r.rev ?? 0) + 1 && stored.responseToken === token) return { r: stored, kept: true }
      return { r: { ...r, responseToken: token }, kept: false }
    }
  }

  /**
   * The platform answered a send of a call that had outlived its lock, and a newer call has changed the
   * record since (it may have given the hold back, not knowing of this send). The answer token is the only
   * word of what the platform did: take the lock again and settle the record as it now stands with it.
   */
  private async adopt (id: string, token: string, steps: HeldMoveSteps<R>): Promise<{ r: R, failed?: Failed }> {
    return await this.locked(id, async (renew) => await this.advance(await this.get(id), { ...steps, renew }, token))
  }

  private async declined (r: R, d: PrepaidDeclined): Promise<{ r: R, failed?: Failed }> {
    const upstream = { code: d.code, description: d.description }
    if (d.family === 'duplicate' && r.sends !== 1) {
      // the platform has had this clientTxnId and its answer was lost: the money may have moved
      return { r: await this.save(r, { status: 'FAILED', upstream, responseToken: null, reconcile: RECONCILE } as Partial<R>) }
    }
    // a refusal; or 1054 to our only send: the id was used before, but not by a send of this record
    return { r: await this.release(r, { status: 'DECLINED', upstream, responseToken: null } as Partial<R>) }
  }

  /**
   * Moves the record as far as it can go: completes what the record names, takes the hold, asks the
   * platform (or reads its kept answer), settles. Returns the record and, when the platform could not be
   * heard, the failure (the record then says what stays held). `inHand`: the platform's answer token to a
   * send already made (adopt()), used instead of sending.
   */
  async advance (r: R, steps: HeldMoveSteps<R>, inHand?: string): Promise<{ r: R, failed?: Failed }> {
    // a FAILED record waits for a person; it never names an operation still to complete (handed to the
    // operator's queue again, in case the first hand-over failed)
    if (r.status === 'FAILED') {
      await this.records.noteFailed(r.clientTxnId, r)
      return { r }
    }
    const unconfirmed = r.hold.state === 'taking' || r.hold.state === 'releasing' || (r.status === 'AUTHORIZED' && r.completing !== false)
    if (unconfirmed && this.clock() - r.updatedAtMs >= MONEY_REFERENCE_HORIZON_MS) {
      return { r: await this.save(r, { status: 'FAILED', reconcile: STALE_RECONCILE } as Partial<R>) }
    }
    r = await this.settleHold(r)
    if (this.isFinal(r)) return { r }
    if (r.status === 'PENDING') {
      let token = r.responseToken
      let kept = true
      if (token === null) {
        if (r.hold.state === 'none') {
          r = await this.settleHold(await this.save(r, { hold: { ...r.hold, seq: r.hold.seq + 1, state: 'taking' } } as Partial<R>))
          if (r.hold.state === 'none') {
            // the platform already moved the money of the send in hand: the store must be put right by hand
            if (inHand !== undefined) return { r: await this.save(r, { status: 'FAILED', reconcile: MOVED_UNHELD } as Partial<R>) }
            return { r: await this.save(r, { status: 'DECLINED', reason: 'INSUFFICIENT_FUNDS' } as Partial<R>) }
          }
        }
      }
      if (token === null && inHand !== undefined) {
        token = inHand;
        ({ r, kept } = await this.keepToken(r, token))
      } else if (token === null) {
        await steps.renew?.()
        // a record from before the count may have sent already: unknown counts as one send
        r = await this.save(r, { sends: sendsSoFar(r) + 1 } as Partial<R>)
        let sent: Awaited<ReturnType<HeldMoveSteps<R>['send']>>
        try {
          sent = await steps.send()
        } catch (err) {
          // a request the adapter refuses to build was never sent: the hold goes back before the error does
          // (unless an earlier send may have moved the money)
          if (isAdapterBadRequest(err)) await this.unsent(r)
          throw err
        }
        if (sent.kind === 'failed') {
          // never reached the platform: the send is not counted (a 1054 to the next one cannot be about it),
          // and the hold goes back unless an earlier send may have moved the money; may have reached it: keep
          // the hold until a repeat settles it
          if (!sent.sent) r = await this.unsent(r)
          return { r, failed: sent }
        }
        if (sent.kind === 'declined') {
          // a code that does not prove a refusal may follow a move the platform made: the hold stays until
          // a repeat hears a certain answer (the platform's own, or 1054 for an id it already had)
          const unsure = sent.family === 'duplicate' ? null : uncertainDecline(sent)
          if (unsure !== null) return { r, failed: unsure }
          return await this.declined(r, sent)
        }
        token = sent.responseToken
        try {
          ({ r, kept } = await this.keepToken(r, token))
        } catch (err) {
          if (err instanceof LifecycleStale) return await this.adopt(r.clientTxnId, token, steps)
          throw err
        }
      }
      await steps.renew?.()
      const read = await steps.read(token)
      if (read.kind === 'failed') {
        // the token is the only way to learn the outcome without sending again (and meeting 1054)
        if (!kept) {
          try {
            r = (await this.keepToken(r, token)).r
          } catch (err) {
            if (err instanceof LifecycleStale) return await this.adopt(r.clientTxnId, token, steps)
            throw err
          }
        }
        return { r, failed: { ...read, retryable: true } }
      }
      if (read.kind === 'declined') return await this.declined(r, read)
      r = await this.save(r, {
        status: 'AUTHORIZED', upstream: { code: '00', description: 'SUCCESS' }, ledgerTransactionId: read.ledgerTransactionId ?? null, responseToken: null, completing: false
      } as Partial<R>)
    }
    // AUTHORIZED: the hold is the debit; what else the store does is idempotent on its reference while the
    // store keeps it, and recorded as begun first, so a repeat past that knows whether it may have been made
    if (r.completing !== true) r = await this.save(r, { completing: true } as Partial<R>)
    await steps.complete(r)
    return { r: await this.save(r, { status: this.done, hold: { ...r.hold, state: 'spent' } } as Partial<R>) }
  }
}
