// The journal's lookups over many stored decisions: index entries and records written straight to Redis (as
// the authorize script lays them out), then lookup by reference alone, a newest-first page, a page of one
// customer. Not a test.   npm run bench:journal [-- --decisions 200000]
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { createRedisClient } from '../src/store/redis.js'
import { Keys, bucketOf, part } from '../src/store/keys.js'
import { RedisJournal } from '../src/journal/source.js'
import { deleteByPrefix } from '../scripts/lib/redis-keys.js'
import { percentile, sortedCopy } from '../scripts/lib/stats.js'

const { values: v } = parseArgs({ options: { decisions: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '20' } } })
const n = Number(v.decisions)
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `extauth-bench-journal:${randomBytes(4).toString('hex')}:`
const client = createRedisClient({ url, commandTimeoutMs: 60_000 })
await client.connect()
const keys = new Keys(prefix)
const t0 = Date.now() - n * 10
try {
  for (let i = 0; i < n; i += 1000) {
    const p = client.pipeline()
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      const urn = `UJB${j % 20000}`
      const ref = `TRN-${j}`
      const b = bucketOf(urn)
      const rec = { urn, reference: ref, last4: '4321', code: '00', reason: 'approved', ruleId: null, debit: '100', held: '100', released: '0', fingerprint: 'f', shadowLimitHits: [], limitEntries: [], arrivedAtMs: t0 + j * 10, deadlineAtMs: t0 + j * 10 + 2000, decidedAtMs: t0 + j * 10 + 1, answeredOnDeadline: false, decidedCode: null, reversal: null, meta: JSON.stringify({ rulesVersion: 'v', shadowHits: [], transactionAmount: '1.00', currencyCode: '356', channel: 'POS', request: { urn, transactionReferenceNumber: ref, last4Digits: '4321', transactionAmount: '1.00', channel: 'POS', mcc: '5411', terminalId: 'T1', systemTraceAuditNumber: '123456', cardNetwork: 'VISA' } }), controlEntries: [], control: null, customerStatus: 'ACTIVE', cardStatus: 'ACTIVE', availableSeen: null, limitSeen: null, controlsSeen: null }
      p.set(keys.decision(urn, ref), JSON.stringify(rec), 'EX', 3600)
      p.zadd(keys.journalIndex(b), t0 + j * 10, `${part(urn)}:${part(ref)}`)
    }
    await p.exec()
  }
  const journal = new RedisJournal(client, prefix)
  const time = async (label: string, fn: () => Promise<unknown>): Promise<void> => {
    const ms: number[] = []
    for (let r = 0; r < Number(v.rounds); r++) {
      const s = performance.now()
      await fn()
      ms.push(performance.now() - s)
    }
    const sorted = sortedCopy(ms)
    console.log(`${label}: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`)
  }
  console.log(`${n} decisions; record ${Buffer.byteLength(await client.get(keys.decision('UJB1', 'TRN-1')) ?? '')} bytes`)
  await time('by reference alone', async () => await journal.byReference(`TRN-${Math.floor(Math.random() * n)}`))
  await time('search, first page of 20, all customers', async () => await journal.search({ limit: 20 }))
  await time('search, one customer, page of 20', async () => await journal.search({ limit: 20, urn: `UJB${Math.floor(Math.random() * 20000)}` }))
} finally {
  await deleteByPrefix(url, prefix)
  client.disconnect()
}
