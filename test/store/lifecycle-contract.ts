// The lifecycle part of the store contract: revisions (compare-and-set saves) and lock renewal, on every
// store (memory.test.ts, redis.test.ts).
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import { LIFECYCLE_INDEX_MAX, LIFECYCLE_TTL_SECONDS, type LifecycleKind, type Store } from '../../src/store/types.js'
import { RedisStore } from '../../src/store/redis.js'
import type { Keys } from '../../src/store/keys.js'
import { LifecycleStale } from '../../src/errors.js'

type MakeStore = (t: Test) => Promise<Store>

/** how long the store keeps a record from now, ms (Infinity: no expiry), read from the store's own state */
async function ttlOf (store: Store, kind: LifecycleKind, id: string): Promise<number> {
  if (store instanceof RedisStore) {
    const ms = await store.client.pttl(store.keys.lifecycle(kind, id))
    return ms === -1 ? Number.POSITIVE_INFINITY : ms
  }
  const e = (store as unknown as { lifecycle: Map<string, { expiresAtMs: number }> }).lifecycle.get((store as unknown as { keys: Keys }).keys.lifecycle(kind, id))
  if (e === undefined) return -2
  return e.expiresAtMs - Date.now()
}

export function lifecycleContract (t: Test, make: MakeStore): void {
  t.test('lifecycle saves with an expected revision are compare-and-set', async (t) => {
    const store = await make(t)
    const id = `R${randomUUID()}`
    await store.putLifecycle('transfer', id, { rev: 1, n: 1 }, 0)
    await t.rejects(store.putLifecycle('transfer', id, { rev: 1, n: 'again' }, 0), LifecycleStale, 'a second creation is refused')
    await store.putLifecycle('transfer', id, { rev: 2, n: 2 }, 1)
    await t.rejects(store.putLifecycle('transfer', id, { rev: 2, n: 'stale' }, 1), { code: 'EXTAUTH_ERR_IN_PROGRESS' }, 'a save over an older revision is refused')
    await t.rejects(store.putLifecycle('transfer', id, { rev: 4, n: 'ahead' }, 3), LifecycleStale, 'and over one not reached yet')
    t.same(await store.getLifecycle('transfer', id), { rev: 2, n: 2 }, 'the refused saves changed nothing')
    await t.rejects(store.putLifecycle('load', id, { rev: 2 }, 1), LifecycleStale, 'an absent record is at revision 0')
    t.equal(await store.getLifecycle('load', id), null)
  })

  t.test('a record saved without a revision counts as revision 0', async (t) => {
    const store = await make(t)
    const id = `R${randomUUID()}`
    await store.putLifecycle('load', id, { status: 'OTP_SENT' })
    await t.rejects(store.putLifecycle('load', id, { status: 'X', rev: 2 }, 1), LifecycleStale)
    await store.putLifecycle('load', id, { status: 'OTP_VERIFIED', rev: 1 }, 0)
    t.same(await store.getLifecycle('load', id), { status: 'OTP_VERIFIED', rev: 1 })
  })

  t.test('a record saved with expires false is kept until a save lets it expire', async (t) => {
    const store = await make(t)
    const id = `R${randomUUID()}`
    await store.putLifecycle('unload', id, { rev: 1, status: 'PENDING' }, 0)
    t.ok(await ttlOf(store, 'unload', id) > 0, 'saved with its lifetime by default')
    await store.putLifecycle('unload', id, { rev: 2, status: 'AUTHORIZED' }, 1, false)
    t.equal(await ttlOf(store, 'unload', id), Number.POSITIVE_INFINITY, 'not final: no expiry, the earlier ttl cleared')
    await t.rejects(store.putLifecycle('unload', id, { rev: 3, status: 'X' }, 1, true), LifecycleStale, 'still compare-and-set')
    t.equal(await ttlOf(store, 'unload', id), Number.POSITIVE_INFINITY, 'a refused save leaves the expiry alone')
    await store.putLifecycle('unload', id, { rev: 3, status: 'UNLOADED' }, 2, true)
    const ttl = await ttlOf(store, 'unload', id)
    t.ok(ttl > (LIFECYCLE_TTL_SECONDS - 60) * 1000 && ttl <= LIFECYCLE_TTL_SECONDS * 1000, `final: kept its lifetime again (${ttl} ms)`)
    await store.putLifecycle('load', id, { status: 'OTP_VERIFIED' }, undefined, false)
    t.equal(await ttlOf(store, 'load', id), Number.POSITIVE_INFINITY, 'a save without a revision too')
  })

  t.test('a lifecycle lock is renewed only by its owner, and only while it holds it', async (t) => {
    const store = await make(t)
    const id = `R${randomUUID()}`
    t.equal(await store.renewLifecycleLock('transfer', id, 5000, 'a'), false, 'no lock: nothing to renew')
    t.equal(await store.lockLifecycle('transfer', id, 5000, 'a'), true)
    t.equal(await store.renewLifecycleLock('transfer', id, 5000, 'b'), false, 'not the owner')
    t.equal(await store.renewLifecycleLock('transfer', id, 60_000, 'a'), true)
    t.equal(await store.lockLifecycle('transfer', id, 5000, 'b'), false, 'still held')
    t.equal(await store.unlockLifecycle('transfer', id, 'a'), true)
    t.equal(await store.renewLifecycleLock('transfer', id, 5000, 'a'), false, 'released: nothing to renew')
  })

  t.test('a renewed lock outlives its first ttl', async (t) => {
    const store = await make(t)
    const id = `R${randomUUID()}`
    t.equal(await store.lockLifecycle('transfer', id, 1, 'short'), true)
    // wait for the 1 ms lock to expire (a free lock can be taken), then show a renewed one cannot be
    let taken = false
    for (let i = 0; i < 500 && !taken; i++) {
      taken = await store.lockLifecycle('transfer', id, 60_000, 'x')
      if (!taken) await new Promise((resolve) => setTimeout(resolve, 2))
    }
    t.ok(taken, 'the 1 ms lock expired')
    t.equal(await store.renewLifecycleLock('transfer', id, 1, 'short'), false, 'an expired lock is not renewed by its old owner')
    t.equal(await store.renewLifecycleLock('transfer', id, 60_000, 'x'), true)
    t.equal(await store.lockLifecycle('transfer', id, 5000, 'y'), false)
    await store.unlockLifecycle('transfer', id, 'x')
  })
}

/**
 * Each customer's index of its lifecycle records (the console's customer page): written with the record's
 * save, both sides of a transfer, newest first, each record once with the time of its first save, bounded.
 */
export function lifecycleIndexContract (t: Test, make: MakeStore): void {
  t.test('a customer\'s lifecycle records: both sides of a transfer, newest first, bounded', async (t) => {
    const store = await make(t)
    const [a, b, c] = [`IA${randomUUID().slice(0, 8)}`, `IB${randomUUID().slice(0, 8)}`, `IC${randomUUID().slice(0, 8)}`]
    t.same(await store.listLifecycle(a, 10), [], 'none yet')
    await store.putLifecycle('load', 'L-1', { urn: a, status: 'OTP_SENT', rev: 1 }, 0)
    await store.putLifecycle('transfer', 'T:1', { fromUrn: a, toUrn: b, status: 'PENDING', rev: 1 }, 0)
    await store.putLifecycle('unload', 'U-1', { urn: b, status: 'PENDING', rev: 1 }, 0)
    await store.putLifecycle('transfer', 'T:1', { fromUrn: a, toUrn: b, status: 'TRANSFERRED', rev: 2 }, 1)
    // a save refused for its revision indexes nothing
    await t.rejects(store.putLifecycle('transfer', 'T-stale', { fromUrn: c, toUrn: a, rev: 2 }, 1), LifecycleStale)
    await store.createLifecycle('preauth', 'P-1', { urn: c, status: 'AUTHORIZED' })
    await store.createLifecycle('preauth', 'P-1', { urn: a, status: 'AUTHORIZED' })
    const refs = async (urn: string): Promise<string[]> => (await store.listLifecycle(urn, 10)).map((r) => `${r.kind} ${r.id}`)
    t.same(await refs(a), ['transfer T:1', 'load L-1'], 'the sender: newest first, each record once (an id with ":" read back whole)')
    t.same(await refs(b), ['unload U-1', 'transfer T:1'], 'the receiver')
    t.same(await refs(c), ['preauth P-1'], 'a record created once is indexed once, under its own customer')
    const [newest, older] = await store.listLifecycle(a, 10)
    t.ok(newest !== undefined && older !== undefined && newest.atMs >= older.atMs && older.atMs > 0, 'with the time of each first save')
    t.same((await store.listLifecycle(a, 1)).map((r) => r.id), ['T:1'], 'limit')

    for (let i = 0; i < LIFECYCLE_INDEX_MAX + 5; i++) await store.putLifecycle('load', `many-${i}`, { urn: c, rev: 1 }, 0)
    const many = await store.listLifecycle(c, LIFECYCLE_INDEX_MAX * 2)
    t.equal(many.length, LIFECYCLE_INDEX_MAX, 'the newest LIFECYCLE_INDEX_MAX are kept')
    t.equal(many[0]?.id, `many-${LIFECYCLE_INDEX_MAX + 4}`)
    t.notOk(many.some((r) => r.id === 'P-1' || r.id === 'many-0'), 'the oldest went')
    if (store instanceof RedisStore) {
      const ttl = await store.client.ttl(store.keys.lifecycleIndex(c))
      t.ok(ttl > 0 && ttl <= LIFECYCLE_TTL_SECONDS, `the index key expires (${ttl} s)`)
    }
  })
}
