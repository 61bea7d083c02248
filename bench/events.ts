// The events relay next to the decisions, in one run: a closed loop of store decisions on Redis without a
// relay (their events wait); the relay alone sending that backlog to a receiver on loopback (its Redis
// work per event, from INFO commandstats, beside a decision's); then decisions with the relay as it ships,
// and with a relay that never gives way. Decisions/s, events/s, delivery latency (written → accepted).
// Not a test.
//   npm run bench:events [-- --duration 8 --concurrency 32 --urns 500 --rate 0]   (--rate: decisions/s in all, 0 = saturation)
// REDIS_URL (default redis://127.0.0.1:6379); keys under a fresh prefix, deleted at the end.
import { parseArgs } from 'node:util'
import { randomBytes, randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import { RedisOutbox } from '../src/events/outbox.js'
import { Relay, type RelayOptions } from '../src/events/relay.js'
import { createWebhookSender } from '../src/events/webhook.js'
import { createEventMetrics } from '../src/events/metrics.js'
import { deleteByPrefix } from '../scripts/lib/redis-keys.js'
import { percentile, sortedCopy } from '../scripts/lib/stats.js'

const { values: v } = parseArgs({ options: { duration: { type: 'string', default: '8' }, concurrency: { type: 'string', default: '32' }, urns: { type: 'string', default: '500' }, rate: { type: 'string', default: '0' } } })
const durationMs = Number(v.duration) * 1000
const concurrency = Number(v.concurrency)
/** decisions/s over all workers; 0: as fast as they go (saturation) */
const rate = Number(v.rate)
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const prefix = `extauth-bench-events:${randomBytes(4).toString('hex')}:`

// the receiver runs in a process of its own, as the client's back end would; it reports each event's lag
const lags: number[] = []
let received = 0
const receiverCode = `
const http = require('node:http')
const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const e = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    process.send(Date.now() - Date.parse(e.createdAt))
    res.writeHead(204).end()
  })
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
`
const child = spawn(process.execPath, ['-e', receiverCode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
const port = await new Promise<number>((resolve) => {
  child.on('message', (m: unknown) => {
    if (typeof m === 'number') { lags.push(m); received++ } else resolve((m as { port: number }).port)
  })
})
const hookUrl = `http://127.0.0.1:${port}/`

const store = new RedisStore(createRedisClient({ url }), { prefix })
await store.connect()
const urns = Array.from({ length: Number(v.urns) }, (_, i) => `UBE${i}`)
for (const u of urns) {
  await store.putCustomer(u, {})
  await store.credit(u, 1_000_000_000, 'seed')
}

/** Redis's own time and calls per command since the last call (INFO commandstats deltas) */
async function commandStats (): Promise<Map<string, { calls: number, usec: number }>> {
  const out = new Map<string, { calls: number, usec: number }>()
  for (const m of (await store.client.info('commandstats')).matchAll(/cmdstat_([a-z|_]+):calls=(\d+),usec=(\d+)/g)) {
    out.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) })
  }
  return out
}
// the commands each side sends itself (a script's own calls are counted apart and inside its evalsha time):
// a decision is one script; the relay reads, claims, sweeps and runs its lease and settle scripts
const DECISION = ['evalsha']
const RELAY = ['evalsha', 'xlen', 'xrange', 'getdel', 'xreadgroup', 'xautoclaim', 'xgroup|create']
function delta (a: Map<string, { calls: number, usec: number }>, b: Map<string, { calls: number, usec: number }>, names: string[]): { calls: number, usec: number } {
  let calls = 0
  let usec = 0
  for (const k of names) {
    calls += (b.get(k)?.calls ?? 0) - (a.get(k)?.calls ?? 0)
    usec += (b.get(k)?.usec ?? 0) - (a.get(k)?.usec ?? 0)
  }
  return { calls, usec }
}

async function run (label: string): Promise<{ decisions: number, perS: number, redis: { calls: number, usec: number } }> {
  const until = Date.now() + durationMs
  let n = 0
  const took: number[] = []
  const s0 = await commandStats()
  const t0 = Date.now()
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    // paced: each worker's decisions at fixed times, whatever each took
    const gapMs = rate > 0 ? concurrency * 1000 / rate : 0
    let next = t0 + (gapMs * w) / concurrency
    while (Date.now() < until) {
      if (gapMs > 0) {
        next += gapMs
        const wait = next - Date.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      }
      const urn = urns[Math.floor(Math.random() * urns.length)] as string
      const now = Date.now()
      const started = performance.now()
      await store.authorize({
        urn, last4: '4321', reference: randomUUID(), attempt: randomUUID(), debitAmount: 100, fingerprint: 'f', nowMs: now, deadlineAtMs: now + 2000,
        decline: null, limits: [], meta: { rulesVersion: 'bench', shadowHits: [], transactionAmount: '1.00', currencyCode: '356', channel: 'POS', request: { urn, transactionAmount: '1.00', channel: 'POS', last4Digits: '4321', mcc: '5411' } }
      })
      took.push(performance.now() - started)
      n++
    }
  }))
  const sortedTook = sortedCopy(took)
  const perS = n / ((Date.now() - t0) / 1000)
  const redis = delta(s0, await commandStats(), RELAY)
  console.log(`${label}: ${n} decisions, ${perS.toFixed(0)}/s, store call p50 ${percentile(sortedTook, 50).toFixed(2)} ms p99 ${percentile(sortedTook, 99).toFixed(2)} ms; Redis (decisions and relay together) ${(redis.calls / n).toFixed(2)} commands, ${(redis.usec / n).toFixed(1)} µs per decision`)
  return { decisions: n, perS, redis }
}

const relayClient = store.client.duplicate()
relayClient.on('error', () => {})
await relayClient.connect()
const sender = createWebhookSender({ url: hookUrl, secret: `whsec_${randomBytes(24).toString('base64')}` })
const relays: Relay[] = []
function startRelay (opts: Partial<RelayOptions>): Relay {
  const relay = new Relay({ outbox: new RedisOutbox(relayClient, prefix), send: sender.send, metrics: createEventMetrics(new Registry()), log: pino({ level: 'warn' }), ...opts })
  relays.push(relay)
  store.onEvent = (b) => { relay.hint(b) }
  relay.start()
  return relay
}
async function stopRelay (relay: Relay): Promise<void> {
  store.onEvent = null
  await relay.stop()
}
async function waitFor (count: number): Promise<void> {
  // eslint-disable-next-line no-unmodified-loop-condition -- the receiver's handler counts `received` while this loop sleeps
  while (received < count) await new Promise((resolve) => setTimeout(resolve, 20))
}
function lagLine (): string {
  const sorted = sortedCopy(lags)
  return `delivery (written → accepted) p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted[sorted.length - 1]} ms`
}

/** decisions with a relay sending their events; then the time until all are delivered */
async function withRelay (label: string, opts: Partial<RelayOptions>): Promise<{ perS: number }> {
  const relay = startRelay(opts)
  received = 0
  lags.length = 0
  const t0 = Date.now()
  const on = await run(label)
  const during = received
  await waitFor(on.decisions)
  const drainedS = (Date.now() - t0) / 1000
  console.log(`  relay: ${during} events delivered during the run (${(during / (durationMs / 1000)).toFixed(0)}/s), all ${received} after ${drainedS.toFixed(1)} s; ${lagLine()}; passes held back ${relay.yields}`)
  await stopRelay(relay)
  return on
}

try {
  // the seeding's events first
  const seedRelay = startRelay({})
  await waitFor(urns.length * 2)
  await stopRelay(seedRelay)

  // 1. decisions alone: their events wait in the outbox
  const a0 = await commandStats()
  const off = await run('relay off          ')
  const d = delta(a0, await commandStats(), DECISION)
  const decisionUs = d.usec / off.decisions
  // 2. the relay alone sends that backlog: its Redis work per event, with no decision beside it
  received = 0
  lags.length = 0
  const s0 = await commandStats()
  const t0 = Date.now()
  const drain = startRelay({})
  await waitFor(off.decisions)
  const drainS = (Date.now() - t0) / 1000
  await stopRelay(drain)
  const r = delta(s0, await commandStats(), RELAY)
  const relayUs = r.usec / off.decisions
  console.log(`relay alone: ${off.decisions} events in ${drainS.toFixed(1)} s (${(off.decisions / drainS).toFixed(0)}/s); Redis ${(r.calls / off.decisions).toFixed(2)} commands, ${relayUs.toFixed(1)} µs per event = ${(100 * relayUs / decisionUs).toFixed(0)} % of a decision's ${decisionUs.toFixed(1)} µs`)
  // 3. both at once: the relay as it ships (bounded sends, passes held back on a busy loop)
  const on = await withRelay('relay on           ', {})
  // 4. both at once, the relay never giving way (as before the bound and the yielding)
  const greedy = await withRelay('relay on, greedy   ', { busyElu: 1, sendsMax: 1024 })
  console.log(`decisions/s with the relay: ${(100 * on.perS / off.perS).toFixed(0)} % of without (greedy relay: ${(100 * greedy.perS / off.perS).toFixed(0)} %)`)
} finally {
  for (const relay of relays) await relay.stop()
  await sender.close()
  relayClient.disconnect()
  await store.close()
  await deleteByPrefix(url, prefix)
  child.kill()
}
