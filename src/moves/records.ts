// The record of a card-lifecycle call in the store, kept by revision, and the per-reference lock its calls
// take: one book per kind (loads, pre-auths, transfers, unloads) reads, saves and locks its records.
import { randomUUID } from 'node:crypto'
import { LIFECYCLE_LOCK_TTL_MS_DEFAULT } from '../adapters/index.js'
import type { LifecycleKind, Store } from '../store/types.js'
import { LifecycleConflict } from './errors.js'

/**
 * How long a lifecycle lock lasts when its holder never lets go (a crashed process). It must outlive the
 * upstream calls made under it: LIFECYCLE_LOCK_TTL_MS, checked at start-up against the adapters' limits.
 */
export { LIFECYCLE_LOCK_TTL_MS_DEFAULT } from '../adapters/index.js'

/** Restarts the held lock's ttl; rejects IN_PROGRESS when the lock was lost (expired, taken by another call). */
export type RenewLock = () => Promise<void>

/**
 * Upstream calls of one reference never overlap: a second caller is told to retry. The lock carries a
 * random owner token and is released only by its owner, so a holder that outlived its lock cannot release
 * the lock a later caller took since. `fn` renews the lock before each upstream call, so a call that
 * lost it stops before asking anyone; a call that outlives it during one upstream call is stopped by the
 * records' revisions (putLifecycle's compare-and-set) instead.
 */
export async function withLock<T> (
  store: Store, kind: LifecycleKind, id: string, fn: (renew: RenewLock) => Promise<T>, ttlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT
): Promise<T> {
  const owner = randomUUID()
  if (!await store.lockLifecycle(kind, id, ttlMs, owner)) {
    throw new LifecycleConflict('IN_PROGRESS', `another call for ${kind} ${id} is in progress; retry`)
  }
  const renew: RenewLock = async () => {
    if (!await store.renewLifecycleLock(kind, id, ttlMs, owner)) {
      throw new LifecycleConflict('IN_PROGRESS', `the lock of ${kind} ${id} was lost to another call; retry`)
    }
  }
  try {
    return await fn(renew)
  } finally {
    // a lock that cannot be released now expires on its own; the call's own outcome is what the caller needs
    await store.unlockLifecycle(kind, id, owner).catch(() => false)
  }
}

/** A record kept by revision: every save is a compare-and-set on `rev` (0 for a record saved before revisions). */
export interface Revised {
  rev?: number
}

/**
 * Saves `next` over `prev` (null: a new record) only if the stored record is still `prev`. `expires`: the
 * record may be forgotten LIFECYCLE_TTL_SECONDS after this save (false: kept until a save makes it final).
 */
export async function saveRevised<T extends Revised> (store: Store, kind: LifecycleKind, id: string, prev: T | null, next: T, expires = true): Promise<T> {
  const expected = prev === null ? 0 : prev.rev ?? 0
  const value = { ...next, rev: expected + 1 }
  await store.putLifecycle(kind, id, value, expected, expires)
  return value
}

/**
 * Whether a record may be forgotten once its lifetime has passed: only when it is settled, so that a
 * repeat that finds no record cannot take or credit money a forgotten record had already moved. A record
 * with money held or moved but not settled, or a party that may have acted, is kept until it is settled.
 */
export type MayExpire<R> = (r: R) => boolean

/**
 * Hands a record left FAILED with a `reconcile` note to whatever queues it for an operator (services.ts: the
 * settlement's exception queue), once it is saved so and again at each repeat of its call: the receiver must
 * open one exception per record however often it is handed over. When it throws, so does the call (the record
 * is saved FAILED): the client is told FAILED only once an operator's queue has it, and its repeat hands it
 * over again.
 */
export type FailedHook = (kind: LifecycleKind, id: string, record: object) => Promise<void>

/**
 * The records of one kind: read one, save over the record as read (so a call that outlived its lock
 * cannot undo a newer call's work), and run a call under the reference's lock. Each save keeps the record
 * for its lifetime when `mayExpire` says it is settled, and without expiry when it is not.
 */
export class RecordBook<R extends Revised> {
  constructor (
    private readonly store: Store,
    readonly kind: LifecycleKind,
    private readonly lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT,
    private readonly mayExpire: MayExpire<R> = () => true,
    /** reads a record of any earlier format as this version's (earlier-formats.ts) */
    private readonly read: (stored: R) => R = (r) => r,
    private readonly onFailed?: FailedHook
  ) {}

  /** hands a FAILED record with a reconcile note to the hook (nothing for any other) */
  async noteFailed (id: string, r: R): Promise<void> {
    const f = r as { status?: string, reconcile?: string }
    if (this.onFailed === undefined || f.status !== 'FAILED' || f.reconcile === undefined) return
    await this.onFailed(this.kind, id, r)
  }

  async find (id: string): Promise<R | null> {
    const r = await this.store.getLifecycle<R>(this.kind, id)
    return r === null ? null : this.read(r)
  }

  /** Saves `next` as record `id` over `prev` (null: a new record). */
  async save (id: string, prev: R | null, next: R): Promise<R> {
    const saved = await saveRevised(this.store, this.kind, id, prev, next, this.mayExpire(next))
    if ((prev as { status?: string } | null)?.status !== 'FAILED') await this.noteFailed(id, saved)
    return saved
  }

  async locked<T> (id: string, fn: (renew: RenewLock) => Promise<T>): Promise<T> {
    return await withLock(this.store, this.kind, id, fn, this.lockTtlMs)
  }
}
