// Lookup by reference alone through the reference index: every customer's decision with the reference (two
// customers of one bucket included), references with the key's separators, nothing that expired, and the
// index's entries leave with their decisions.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryStore } from '../../src/store/memory.js'
import type { RedisStore } from '../../src/store/redis.js'
import { MemoryJournal, RedisJournal, type JournalReader } from '../../src/journal/source.js'
import { bucketOf, part, refShard } from '../../src/store/keys.js'
import { DECISION_RETENTION_MS_DEFAULT } from '../../src/store/types.js'
import { sharedRedisStore, SHARED_REDIS_URL } from '../helpers/redis.js'
import { main } from '../../src/cli/main.js'
import { authInput } from '../store/contract.js'

const DAY = 24 * 3600_000

/** two urns of one bucket: their decisions share the bucket's index hash */
function sameBucketUrns (tag: string): [string, string] {
  const first = `${tag}${randomUUID().slice(0, 8)}`
  for (let i = 0; ; i++) {
    const other = `${tag}${i}x${randomUUID().slice(0, 4)}`
    if (bucketOf(other) === bucketOf(first)) return [first, other]
  }
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: by reference alone`, async (t) => {
    const store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const journal: JournalReader = store instanceof MemoryStore ? new MemoryJournal(store) : new RedisJournal(store.client, store.keys.prefix)
    const [a, b] = sameBucketUrns('RI')
    const c = `RI${randomUUID().slice(0, 8)}`
    for (const u of [a, b, c]) {
      await store.putCustomer(u, {})
      await store.credit(u, 10_000, 'seed')
    }
    const odd = 'REF:with%odd:parts'
    for (const u of [a, b, c]) await store.authorize(authInput(u, { reference: odd }))
    await store.authorize(authInput(a, { reference: 'REF' }))
    await store.authorize(authInput(b, { reference: 'with%odd:parts' }))
    t.same((await journal.byReference(odd)).map((e) => e.urn).sort(), [a, b, c].sort(), 'all three customers, two of them in one bucket')
    t.same((await journal.byReference('REF')).map((e) => e.urn), [a], 'a prefix of another reference finds only its own')
    t.same((await journal.byReference('with%odd:parts')).map((e) => e.urn), [b], 'a suffix too')
    // a replay adds nothing
    await store.authorize(authInput(a, { reference: 'REF' }))
    t.equal((await journal.byReference('REF')).length, 1)
  })
}

t.test('memory: an expired decision is not found, and leaves the index', async (t) => {
  let now = Date.parse('2026-03-01T10:00:00Z')
  const store = new MemoryStore({ clock: () => now })
  const journal = new MemoryJournal(store)
  await store.putCustomer('RIX', {})
  await store.credit('RIX', 1000, 'seed')
  await store.authorize(authInput('RIX', { reference: 'OLD', nowMs: now, deadlineAtMs: now + 5000 }))
  t.equal((await journal.byReference('OLD')).length, 1)
  now += DECISION_RETENTION_MS_DEFAULT + 1
  t.same(await journal.byReference('OLD'), [], 'expired with the decision')
  t.same(store.decisionsByReference('OLD'), [])
})

/** the shared Redis, its journal, and a customer with funds */
async function redisCustomer (t: { teardown: (fn: () => unknown) => void }, tag: string): Promise<{ store: RedisStore, journal: RedisJournal, urn: string }> {
  const store = await sharedRedisStore(t)
  const urn = `${tag}${randomUUID().slice(0, 8)}`
  await store.putCustomer(urn, {})
  await store.credit(urn, 10_000, 'seed')
  return { store, journal: new RedisJournal(store.client, store.keys.prefix), urn }
}

t.test('redis: the index keeps what is stored and drops what expired', async (t) => {
  const { store, journal, urn } = await redisCustomer(t, 'RIE')
  const t0 = Date.now() - 30 * DAY
  const refKey = (ref: string): string => store.keys.refIndex(bucketOf(urn), refShard(part(ref)))
  // the authorize script is given the index's hash (refIndexOf); the trim that takes an entry out sums the
  // reference's bytes in Lua: past ASCII too, both must name the same hash
  const gone = ['GONE', 'GONÉ:€-ü%1']
  for (const ref of gone) await store.authorize(authInput(urn, { reference: ref, nowMs: t0, deadlineAtMs: Date.now() + 5000 }))
  await store.authorize(authInput(urn, { reference: 'KEPT', nowMs: t0 + 1, deadlineAtMs: Date.now() + 5000 }))
  // the gone ones expire (as their ttl would make them); KEPT is still stored, as a decision a long limit window keeps
  for (const ref of gone) {
    t.same((await journal.byReference(ref)).map((e) => e.reference), [ref], `${ref} is found while stored`)
    await store.client.del(store.keys.decision(urn, ref))
    t.same(await journal.byReference(ref), [], 'an expired decision is never returned, even before its entry leaves')
    t.equal(await store.client.hget(refKey(ref), part(ref)), part(urn), 'its entry is still there')
  }
  // a decision past the retention of the first ones trims the entries of the decisions that are gone
  await store.authorize(authInput(urn, { reference: 'NEW', nowMs: t0 + 10 * DAY, deadlineAtMs: Date.now() + 5000 }))
  for (const ref of gone) {
    t.equal(await store.client.hget(refKey(ref), part(ref)), null, `${ref}: the expired decision left the reference index`)
    t.equal(await store.client.zscore(store.keys.journalIndex(bucketOf(urn)), `${part(urn)}:${part(ref)}`), null, 'and the time index')
  }
  t.same((await journal.byReference('KEPT')).map((e) => e.reference), ['KEPT'], 'a decision still stored is still found')
  t.same((await journal.byReference('NEW')).map((e) => e.reference), ['NEW'])
})

t.test('redis: extauth decisions reindex puts decisions kept from before the index into it', async (t) => {
  const { store, journal, urn } = await redisCustomer(t, 'RIR')
  await store.authorize(authInput(urn, { reference: 'BEFORE' }))
  await store.authorize(authInput(urn, { reference: 'EXPIRED' }))
  // as a version without the index left them: no reference entries; one decision has expired since
  for (const ref of ['BEFORE', 'EXPIRED']) await store.client.hdel(store.keys.refIndex(bucketOf(urn), refShard(ref)), ref)
  await store.client.del(store.keys.decision(urn, 'EXPIRED'))
  t.same(await journal.byReference('BEFORE'), [], 'not found before')
  const errs: string[] = []
  const code = await main(['decisions', 'reindex'], { out: () => {}, err: (l) => errs.push(l), env: { REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: store.keys.prefix } })
  t.equal(code, 0, errs.join('\n'))
  t.match(errs.at(-1), /reindexed: 1 decision/)
  t.same((await journal.byReference('BEFORE')).map((e) => e.urn), [urn], 'found after')
  t.equal(await store.client.hget(store.keys.refIndex(bucketOf(urn), refShard('EXPIRED')), 'EXPIRED'), null, 'an expired decision is not put back')
  t.equal(await main(['decisions', 'reindex', 'extra'], { out: () => {}, err: () => {}, env: {} }), 2, 'wrong usage')
})
