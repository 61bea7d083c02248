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
import { isAdapterBadRequest } from '../adapters/errors.js'
import type { PrepaidDeclined } from '../adapters/prepaid.js'
import type { Failed, Ok } from '../adapters/result.js'
import { StoreRejection } from '../errors.js'
import type { Store } from '../store/types.js'
import {
  LIFECYCLE_LOCK_TTL_MS_DEFAULT, LifecycleConflict, LifecycleNotFound, MONEY_REFERENCE_HORIZON_MS, STALE_RECONCILE, withLock,
  type LifecycleAnswer, type LifecycleStatus, type Upstream
} from './outcome.js'

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

export interface HeldMoveRecord {
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
  /** Decrypt the kept answer token and read it */
  read: (responseToken: string) => Promise<Ok<{ ledgerTransactionId?: string }> | PrepaidDeclined | Failed>
  /** what the store still does after the platform's 00, idempotently (a transfer credits its receiver) */
  complete: (r: R) => Promise<void>
}

const RECONCILE = 'the platform reports this clientTxnId as already used; check its outcome there, then release or complete the held amount'

function isInsufficient (err: unknown): boolean {
  return err instanceof StoreRejection && err.word === 'INSUFFICIENT_FUNDS'
}

export class HeldMoves<R extends HeldMoveRecord> {
  constructor (
    private readonly store: Store,
    readonly kind: 'transfer' | 'unload',
    private readonly done: 'TRANSFERRED' | 'UNLOADED',
    private readonly clock: () => number,
    private readonly lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT
  ) {}

  /** the store reference of a hold's debit or of its release's credit */
  reference (r: HeldMoveRecord, op: 'hold' | 'release', seq = r.hold.seq): string {
    return `${this.kind}:${r.clientTxnId}:${op}:${seq}`
  }

  isFinal (r: HeldMoveRecord): boolean {
    return r.status === this.done || r.status === 'DECLINED' || r.status === 'FAILED'
  }

  async find (id: string): Promise<R | null> {
    return await this.store.getLifecycle<R>(this.kind, id)
  }

  async get (id: string): Promise<R> {
    const r = await this.find(id)
    if (r === null) throw new LifecycleNotFound(this.kind === 'transfer' ? 'TRANSFER_NOT_FOUND' : 'UNLOAD_NOT_FOUND', `no ${this.kind} ${id}`)
    return r
  }

  async save (r: R, patch: Partial<R>): Promise<R> {
    const next = { ...r, ...patch, updatedAtMs: this.clock() }
    await this.store.putLifecycle(this.kind, r.clientTxnId, next)
    return next
  }

  /** A new record, saved before the platform is first asked: a repeat after a lost answer knows it asked. */
  async create (fields: Omit<R, 'status' | 'upstream' | 'ledgerTransactionId' | 'hold' | 'responseToken' | 'createdAtMs' | 'updatedAtMs'>, hold: { urn: string, amount: number }): Promise<R> {
    const now = this.clock()
    const r = {
      ...fields,
      status: 'PENDING',
      upstream: null,
      ledgerTransactionId: null,
      hold: { urn: hold.urn, amount: String(hold.amount), seq: 0, state: 'none' },
      responseToken: null,
      createdAtMs: now,
      updatedAtMs: now
    } as unknown as R
    await this.store.putLifecycle(this.kind, r.clientTxnId, r)
    return r
  }

  async locked<T> (id: string, fn: () => Promise<T>): Promise<T> {
    return await withLock(this.store, this.kind, id, fn, this.lockTtlMs)
  }

  /** A repeat with other values than the first call's is a conflict, never a new operation. */
  conflict (r: HeldMoveRecord, fingerprint: string): void {
    if (r.fingerprint !== fingerprint) throw new LifecycleConflict('REFERENCE_CONFLICT', `${this.kind} ${r.clientTxnId} exists with other values`)
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
        await this.store.debit(h.urn, Number(h.amount), this.reference(r, 'hold'))
      } catch (err) {
        if (isInsufficient(err)) return await this.save(r, { hold: { ...h, state: 'none' } } as Partial<R>)
        throw err
      }
      return await this.save(r, { hold: { ...h, state: 'held' } } as Partial<R>)
    }
    if (h.state === 'releasing') {
      await this.store.credit(h.urn, Number(h.amount), this.reference(r, 'release'))
      return await this.save(r, { hold: { ...h, state: 'none' } } as Partial<R>)
    }
    return r
  }

  /** Gives the hold back, recording the intent (and `patch`) first. */
  private async release (r: R, patch: Partial<R>): Promise<R> {
    if (r.hold.state !== 'held') return await this.save(r, patch)
    return await this.settleHold(await this.save(r, { ...patch, hold: { ...r.hold, state: 'releasing' } }))
  }

  /**
   * Records the answer token. Should that fail, the answer is in hand and is read all the same; the
   * record then lacks the token (`kept` false), and a failed read tries once more to keep it.
   */
  private async keepToken (r: R, token: string): Promise<{ r: R, kept: boolean }> {
    try {
      return { r: await this.save(r, { responseToken: token } as Partial<R>), kept: true }
    } catch {
      return { r: { ...r, responseToken: token }, kept: false }
    }
  }

  private async declined (r: R, d: PrepaidDeclined): Promise<{ r: R, failed?: Failed }> {
    const upstream = { code: d.code, description: d.description }
    if (d.family === 'duplicate') {
      // the platform has had this clientTxnId and its answer was lost: the money may have moved
      return { r: await this.save(r, { status: 'FAILED', upstream, responseToken: null, reconcile: RECONCILE } as Partial<R>) }
    }
    return { r: await this.release(r, { status: 'DECLINED', upstream, responseToken: null } as Partial<R>) }
  }

  /**
   * Moves the record as far as it can go: completes what the record names, takes the hold, asks the
   * platform (or reads its kept answer), settles. Returns the record and, when the platform could not be
   * heard, the failure (the record then says what stays held).
   */
  async advance (r: R, steps: HeldMoveSteps<R>): Promise<{ r: R, failed?: Failed }> {
    // a FAILED record waits for a person; it never names an operation still to complete
    if (r.status === 'FAILED') return { r }
    const unconfirmed = r.hold.state === 'taking' || r.hold.state === 'releasing' || r.status === 'AUTHORIZED'
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
          if (r.hold.state === 'none') return { r: await this.save(r, { status: 'DECLINED', reason: 'INSUFFICIENT_FUNDS' } as Partial<R>) }
        }
        let sent: Awaited<ReturnType<HeldMoveSteps<R>['send']>>
        try {
          sent = await steps.send()
        } catch (err) {
          // a request the adapter refuses to build was never sent: the hold goes back before the error does
          if (isAdapterBadRequest(err)) await this.release(r, {})
          throw err
        }
        if (sent.kind === 'failed') {
          // never reached the platform: give the hold back; may have: keep it until a repeat settles it
          if (!sent.sent) r = await this.release(r, {})
          return { r, failed: sent }
        }
        if (sent.kind === 'declined') return await this.declined(r, sent)
        token = sent.responseToken;
        ({ r, kept } = await this.keepToken(r, token))
      }
      const read = await steps.read(token)
      if (read.kind === 'failed') {
        // the token is the only way to learn the outcome without sending again (and meeting 1054)
        if (!kept) r = (await this.keepToken(r, token)).r
        return { r, failed: { ...read, retryable: true } }
      }
      if (read.kind === 'declined') return await this.declined(r, read)
      r = await this.save(r, {
        status: 'AUTHORIZED', upstream: { code: '00', description: 'SUCCESS' }, ledgerTransactionId: read.ledgerTransactionId ?? null, responseToken: null
      } as Partial<R>)
    }
    // AUTHORIZED: the hold is the debit; what else the store does is idempotent on its reference
    await steps.complete(r)
    return { r: await this.save(r, { status: this.done, hold: { ...r.hold, state: 'spent' } } as Partial<R>) }
  }
}
