// The events relay next to the decisions: the same closed-loop load of store decisions on Redis, first
// without a relay, then with one sending every event to a receiver on loopback; decisions/s of both runs,
// events/s delivered, delivery latency (written → accepted) and Redis commands per decision. Not a test.
//   npm run bench:events [-- --duration 8 --concurrency 32 --urns 500]
// REDIS_URL (default redis://127.0.0.1:6379); keys under a fresh prefix, deleted at the end.
import { parseArgs } from 'node:util'
import { randomBytes, randomUUID } from 'node:crypto'
import { spawn } from 'node:child_process'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import { RedisOutbox } from '../src/events/outbox.js'
import { Relay } from '../src/events/relay.js'
import { createWebhookSender } from '../src/events/webhook.js'
import { createEventMetrics } from '../src/events/metrics.js'
import { deleteByPrefix } from '../scripts/lib/redis-keys.js'
import { percentile, sortedCopy } from '../scripts/lib/stats.js'

const { values: v } = parseArgs({ options: { duration: { type: 'string', default: '8' }, concurrency: { type: 'string', default: '32' }, urns: { type: 'string', default: '500' }, 'relay-concurrency': { type: 'string', default: '16' } } })
const durationMs = Number(v.duration) * 1000
const concurrency = Number(v.concurrency)
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

async function commands (): Promise<number> {
  const info = await store.client.info('stats')
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0)
}

async function run (label: string): Promise<{ decisions: number, perS: number, cmds: number }> {
  const until = Date.now() + durationMs
  let n = 0
  const c0 = await commands()
  const t0 = Date.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) {
      const urn = urns[Math.floor(Math.random() * urns.length)] as string
      const now = Date.now()
      await store.authorize({
        urn, last4: '4321', reference: randomUUID(), attempt: randomUUID(), debitAmount: 100, fingerprint: 'f', nowMs: now, deadlineAtMs: now + 2000,
        decline: null, limits: [], meta: { rulesVersion: 'bench', shadowHits: [], transactionAmount: '1.00', currencyCode: '356', channel: 'POS', request: { urn, transactionAmount: '1.00', channel: 'POS', last4Digits: '4321', mcc: '5411' } }
      })
      n++
    }
  }))
  const perS = n / ((Date.now() - t0) / 1000)
  const cmds = await commands() - c0
  console.log(`${label}: ${n} decisions, ${perS.toFixed(0)}/s, ${(cmds / n).toFixed(2)} Redis commands per decision`)
  return { decisions: n, perS, cmds }
}

try {
  const sender = createWebhookSender({ url: hookUrl, secret: `whsec_${randomBytes(24).toString('base64')}` })
  const relay = new Relay({ outbox: new RedisOutbox(store.client, prefix), send: sender.send, metrics: createEventMetrics(new Registry()), log: pino({ level: 'warn' }), concurrency: Number(v['relay-concurrency']) })
  store.onEvent = (b) => { relay.hint(b) }
  relay.start()
  // the seeding's events first
  while (received < urns.length * 2) await new Promise((resolve) => setTimeout(resolve, 50))
  received = 0
  lags.length = 0
  const t0 = Date.now()
  const on = await run('relay on ')
  const sentDuringRun = received
  while (received < on.decisions) await new Promise((resolve) => setTimeout(resolve, 20))
  const drainedMs = Date.now() - t0
  const sorted = sortedCopy(lags)
  console.log(`relay: ${sentDuringRun} events delivered during the run (${(sentDuringRun / (durationMs / 1000)).toFixed(0)}/s), all ${received} after ${(drainedMs / 1000).toFixed(1)} s (${(received / (drainedMs / 1000)).toFixed(0)}/s); delivery p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted[sorted.length - 1]} ms`)
  await relay.stop()
  await sender.close()
  store.onEvent = null
  const off = await run('relay off')
  console.log(`decisions/s with the relay: ${(100 * on.perS / off.perS).toFixed(0)} % of without; Redis commands per decision ${(on.cmds / on.decisions).toFixed(2)} vs ${(off.cmds / off.decisions).toFixed(2)}`)
} finally {
  await store.close()
  await deleteByPrefix(url, prefix)
  child.kill()
}
