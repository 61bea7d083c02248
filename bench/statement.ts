// A large statement imported: lines per second and peak memory, beside a baseline of reading and checking the
// same file in the same run (the import reads it twice: checked whole, then applied). Not a test.
//   npm run bench:statement [-- --lines 1000000 --store redis|memory --in-flight 64]
// The file goes to the system's temporary folder (about 200 bytes a line) and is deleted after; with the
// Redis store (REDIS_URL, default 127.0.0.1:6379) the postings are written under a prefix of its own, deleted after.
import { parseArgs } from 'node:util'
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { MemoryStore } from '../src/store/memory.js'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import type { Store } from '../src/store/types.js'
import { settlementFor } from '../src/settlement/for-store.js'
import { importStatement } from '../src/settlement/import.js'
import { readExtauthV1 } from '../src/settlement/statement-reader.js'
import { deleteByPrefix } from '../scripts/lib/redis-keys.js'

/** yesterday (UTC) and today: statements are imported within days of their postings (POSTING_HORIZON_MS) */
const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
const NEXT = new Date(Date.parse(DAY) + 86_400_000).toISOString().slice(0, 10)

const { values: v } = parseArgs({ options: { lines: { type: 'string', default: '1000000' }, store: { type: 'string', default: 'redis' }, 'in-flight': { type: 'string', default: '64' }, customers: { type: 'string', default: '10000' } } })
const lines = Number(v.lines)
const customers = Number(v.customers)
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `extauth-bench-statement:${randomBytes(4).toString('hex')}:`

const peakRssMb = (): number => Math.round(process.resourceUsage().maxRSS / 1024)

const dir = await mkdtemp(join(tmpdir(), 'extauth-bench-statement-'))
const file = join(dir, 'statement.ndjson')
let store: Store | null = null
try {
  // the platform's day: fees, refunds and adjustments of known customers, and purchases extauth never saw
  // (force posts: each one an exception), 1 in 100
  const out = createWriteStream(file)
  const write = async (s: string): Promise<void> => { if (!out.write(s)) await once(out, 'drain') }
  await write(JSON.stringify({ statement: { id: `BENCH-${lines}`, from: `${DAY}T00:00:00Z`, to: `${NEXT}T00:00:00Z`, complete: true } }) + '\n')
  const types = ['fee', 'refund', 'adjustment']
  for (let i = 0; i < lines; i++) {
    const type = i % 100 === 99 ? 'purchase' : types[i % 3] as string
    await write(`{"platformId":"PB-${i}","type":"${type}","reference":"BR-${i}","urn":"BU${i % customers}","last4":"4321","amount":"${1 + (i % 997)}","currency":"356","postedAt":"${DAY}T10:00:00Z"}\n`)
  }
  out.end()
  await once(out, 'finish')
  const bytes = (await stat(file)).size
  console.log(`statement: ${lines} lines, ${(bytes / 1e6).toFixed(0)} MB, ${customers} customers, store ${v.store}, ${v['in-flight']} postings in flight`)

  const t0 = performance.now()
  let read = 0
  for await (const it of readExtauthV1(file)) if ('posting' in it) read++
  const baselineS = (performance.now() - t0) / 1000
  console.log(`baseline  read and check ${read} lines: ${baselineS.toFixed(1)} s, ${Math.round(read / baselineS)} lines/s, peak RSS ${peakRssMb()} MB`)

  store = v.store === 'memory' ? new MemoryStore() : new RedisStore(createRedisClient({ url, commandTimeoutMs: 60_000 }), { prefix })
  if (store instanceof RedisStore) await store.connect()
  for (let c = 0; c < customers; c++) {
    await store.putCustomer(`BU${c}`, {})
    await store.credit(`BU${c}`, 10_000_000, 'bench-seed')
  }
  const t1 = performance.now()
  const r = await importStatement({ store, settlement: settlementFor(store), file, inFlightMax: Number(v['in-flight']) })
  const importS = (performance.now() - t1) / 1000
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r.errors.slice(0, 3))}`)
  console.log(`import    check and apply ${r.report.applied} postings: ${importS.toFixed(1)} s, ${Math.round(lines / importS)} lines/s, peak RSS ${peakRssMb()} MB`)
  console.log(`          outcomes ${JSON.stringify(r.report.outcomes)}, exceptions ${r.report.exceptions}`)
  console.log(`import / baseline: ${(importS / baselineS).toFixed(1)}x the time of reading the file once`)
} finally {
  await store?.close()
  if (v.store !== 'memory') await deleteByPrefix(url, prefix)
  await rm(dir, { recursive: true, force: true })
}
