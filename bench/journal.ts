// The journal's lookups over many stored decisions. One decision is made by the real authorize script, with
// a request as the platform sends it; its stored record is the template of all the others, written straight
// to Redis as that script lays them out (record, time index, reference index), so a million are stored in
// seconds. Then the real lookup paths: by reference alone through the reference index, beside the scan of
// every bucket's time index it replaced; a newest-first page; a page of one customer. Also the sizes: the
// record as stored and as a journal entry, and the bytes per entry of both indexes. Not a test.
//   npm run bench:journal [-- --decisions 1000000 --rounds 200]
// Stores ~1 KB per decision in the Redis of REDIS_URL (about 1 GB for a million) and deletes it after.
import { parseArgs } from 'node:util'
import { randomBytes, randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { Cluster, type Redis } from 'ioredis'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import { BUCKETS, Keys, REF_INDEX_SHARDS, bucketOf, part, refShard } from '../src/store/keys.js'
import { decodeRecord, encodeRecord } from '../src/store/record-format.js'
import type { DecisionMeta, DecisionRecord } from '../src/store/types.js'
import { RedisJournal } from '../src/journal/source.js'
import { decisionEntryOf } from '../src/store/decision-entry.js'
import { deleteByPrefix } from '../scripts/lib/redis-keys.js'
import { percentile, sortedCopy } from '../scripts/lib/stats.js'

const { values: v } = parseArgs({ options: { decisions: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '200' }, 'scan-rounds': { type: 'string', default: '10' } } })
const n = Number(v.decisions)
const CUSTOMERS = Math.max(1, Math.floor(n / 50))
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `extauth-bench-journal:${randomBytes(4).toString('hex')}:`
const client = createRedisClient({ url, commandTimeoutMs: 60_000 })
const store = new RedisStore(client, { prefix })
await store.connect()
const redis = client as Redis
const keys = new Keys(prefix)
const journal = new RedisJournal(client, prefix)

/** The lookup it replaced: every bucket's time index scanned for members ending in the reference. */
async function byReferenceScan (reference: string): Promise<number> {
  const match = `*:${part(reference).replace(/[*?[\]\\]/g, '\\$&')}`
  let found = 0
  for (let i = 0; i < BUCKETS; i += 128) {
    await Promise.all(Array.from({ length: Math.min(128, BUCKETS - i) }, async (_, j) => {
      let cursor = '0'
      do {
        const [next, raw] = await redis.zscan(keys.journalIndex(i + j), cursor, 'MATCH', match, 'COUNT', 1000)
        cursor = next
        for (let k = 0; k < raw.length; k += 2) {
          const member = raw[k] as string
          if (member.slice(member.indexOf(':') + 1) === part(reference) && await redis.get(keys.decisionOf(i + j, member)) !== null) found++
        }
      } while (cursor !== '0')
    }))
  }
  return found
}

async function time (label: string, rounds: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  const ms: number[] = []
  for (let r = 0; r < rounds; r++) {
    const s = performance.now()
    await fn(r)
    ms.push(performance.now() - s)
  }
  const sorted = sortedCopy(ms)
  console.log(`${label.padEnd(44)} p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms   p99 ${percentile(sorted, 99).toFixed(1).padStart(7)} ms   (${rounds} lookups)`)
}

/** MEMORY USAGE summed over keys, in one pipeline per 1,000 */
async function bytesOf (ks: string[]): Promise<number> {
  let total = 0
  for (let i = 0; i < ks.length; i += 1000) {
    const p = redis.pipeline()
    for (const k of ks.slice(i, i + 1000)) p.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')
    for (const [, b] of await p.exec() ?? []) total += Number(b ?? 0)
  }
  return total
}

try {
  if (client instanceof Cluster) throw new Error('bench:journal writes its decisions in pipelines: point REDIS_URL at a single Redis')
  // the template: a decision of the real script, on a request with the fields the platform sends
  const request = {
    urn: 'UJB0', customerId: 'C0', merchantName: 'CORNER SHOP BANGALORE', terminalId: 'T0042', mcc: '5411', systemTraceAuditNumber: '123456',
    cardNetwork: 'RUPAY', channel: 'POS', merchantId: 'M000042', transactionAmount: '12500', transactionReferenceNumber: 'TRN-TEMPLATE',
    currencyCode: '356', last4Digits: '4321'
  }
  await store.putCustomer('UJB0', { customerId: 'C0' })
  await store.putCard('UJB0', '4321', 'ACTIVE')
  await store.credit('UJB0', 10_000_000, 'seed')
  const now = Date.now()
  await store.authorize({
    urn: 'UJB0', last4: '4321', reference: 'TRN-TEMPLATE', attempt: randomUUID(), debitAmount: 12500, fingerprint: 'f'.repeat(64), nowMs: now,
    deadlineAtMs: now + 2000, decline: null, limits: [],
    meta: { rulesVersion: '2026-11-01.3', shadowHits: [], transactionAmount: '12500', currencyCode: '356', channel: 'POS', request },
    controls: { defaults: [{ kind: 'POS', enabled: true, perTransactionMax: null, dailyMax: 5_000_000 }], day: '20261124' }
  })
  const templateKey = keys.decision('UJB0', 'TRN-TEMPLATE')
  const template = decodeRecord(templateKey, await redis.get(templateKey) as string)
  const meta = template.meta as DecisionMeta & { request: Record<string, string> }

  const t0 = now - n * 5
  const started = performance.now()
  for (let i = 0; i < n; i += 2000) {
    const p = redis.pipeline()
    const hashes = new Map<string, string[]>()
    for (let j = i; j < Math.min(n, i + 2000); j++) {
      const urn = `UJB${1 + (j % CUSTOMERS)}`
      const ref = `TRN${String(j).padStart(9, '0')}`
      const b = bucketOf(urn)
      const at = t0 + j * 5
      const rec: DecisionRecord = {
        ...template, urn, reference: ref, attempt: randomUUID(), arrivedAtMs: at, deadlineAtMs: at + 2000, decidedAtMs: at + 3,
        meta: { ...meta, request: { ...meta.request, urn, customerId: `C${j % CUSTOMERS}`, transactionReferenceNumber: ref } },
        controlEntries: template.controlEntries.map(([, amount]) => [keys.controlDaily(urn, '4321', 'POS', '20261124'), amount])
      }
      const key = keys.decision(urn, ref)
      p.set(key, encodeRecord(key, rec), 'EX', 3600)
      p.zadd(keys.journalIndex(b), at, `${part(urn)}:${part(ref)}`)
      const h = keys.refIndex(b, refShard(part(ref)))
      let fields = hashes.get(h)
      if (fields === undefined) hashes.set(h, fields = [])
      fields.push(part(ref), part(urn))
    }
    for (const [h, fields] of hashes) p.hset(h, ...fields)
    await p.exec()
  }
  console.log(`${n} decisions of ${CUSTOMERS} customers stored in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const entry = decisionEntryOf(template)
  const recordKey = keys.decision('UJB1', 'TRN000000000')
  console.log(`record: ${Buffer.byteLength(await redis.get(recordKey) ?? '')} B of JSON, ${await bytesOf([recordKey])} B in Redis (MEMORY USAGE); as a journal entry ${Buffer.byteLength(JSON.stringify(entry))} B`)
  const refKeys = Array.from({ length: BUCKETS * REF_INDEX_SHARDS }, (_, i) => keys.refIndex(Math.floor(i / REF_INDEX_SHARDS), i % REF_INDEX_SHARDS))
  const timeKeys = Array.from({ length: BUCKETS }, (_, b) => keys.journalIndex(b))
  const encodings = new Set((await Promise.all(refKeys.slice(0, 64).map(async (k) => await redis.object('ENCODING', k)))).filter((e) => e !== null))
  console.log(`reference index: ${((await bytesOf(refKeys)) / n).toFixed(1)} B per decision (${[...encodings].join(', ')}); time index: ${((await bytesOf(timeKeys)) / n).toFixed(1)} B per decision`)

  const pick = (): string => `TRN${String(Math.floor(Math.random() * n)).padStart(9, '0')}`
  const misses: string[] = []
  for (let i = 0; i < 20; i++) await journal.byReference(pick())
  await time('by reference alone, reference index', Number(v.rounds), async () => {
    const ref = pick()
    const found = await journal.byReference(ref)
    if (found.length !== 1) misses.push(ref)
  })
  if (misses.length > 0) throw new Error(`the index missed ${misses.length} stored decisions, e.g. ${misses[0]}`)
  await time('by reference alone, an unknown reference', Number(v.rounds), async () => await journal.byReference('NO-SUCH-REF'))
  await time('by reference alone, scan of every bucket (before)', Number(v['scan-rounds']), async () => {
    if (await byReferenceScan(pick()) !== 1) throw new Error('the scan missed a decision')
  })
  await time('search, first page of 20, all customers', 20, async () => await journal.search({ limit: 20 }))
  await time('search, one customer, page of 20', 20, async () => await journal.search({ limit: 20, urn: `UJB${1 + Math.floor(Math.random() * CUSTOMERS)}` }))
} finally {
  await deleteByPrefix(url, prefix)
  await store.close()
}
