// The fair floor, for bench/bench.ts: the least a server must do on extauth's stack to keep extauth's
// guarantees, and nothing more. The same Fastify settings, body schema, caller-header check and answer shape
// as POST /api/v1/externalAuth; one Lua script per request doing the idempotency read (a conflict on the same
// reference with another amount or card), the customer's status and balance, the card's status, the
// deadline check against Redis's clock, the debit and a decision record kept 8 days; one pino line per
// decision on an asynchronous destination; a counter and a histogram; a deadline timer per request. No
// rules, limits, card controls, event stream or compensation.
//   PORT, REDIS_URL, REDIS_KEY_PREFIX, EXTAUTH_CONSUMER_KEY, EXTAUTH_CLIENT_ID, EXTAUTH_BANK_ID,
//   DECISION_DEADLINE_MS (2000); FLOOR_SEED_RUN_ID, FLOOR_SEED_URNS, FLOOR_SEED_CREDIT: the bench's customers,
//   created at start (each ACTIVE with card 4321 ACTIVE)
import { Redis } from 'ioredis'
import { WriteCoalescer } from '../src/store/coalesce-writes.js'
import { pino } from 'pino'
import { Counter, Histogram, Registry } from 'prom-client'
import { answerFor } from '../src/http/answer.js'
import { CARD_LAST4, fundedUrn, type Scenario } from '../k6/scenario.js'
import { answerCtx, floorApp, serve } from './lib/floor-app.js'
import { DECIDE_LUA, floorKeysOf } from './lib/fair-floor-script.js'

const env = process.env
const prefix = env.REDIS_KEY_PREFIX ?? 'extauth-fair-floor:'
const deadlineMs = Number(env.DECISION_DEADLINE_MS ?? 2000)
const RECORD_TTL_S = 8 * 24 * 3600
const floorKeys = floorKeysOf(prefix)

interface Decide { floorDecide: (customer: string, cards: string, decision: string, last4: string, debit: string, deadlineAtMs: string, ttlS: string) => Promise<[string, string]> }
const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true })
redis.defineCommand('floorDecide', { numberOfKeys: 3, lua: DECIDE_LUA })
/** a turn's commands in one write, as extauth sends them (src/store/coalesce-writes.ts): a floor without it would flatter extauth */
const coalescer = new WriteCoalescer()
const store = redis as unknown as Decide

// stdout through a buffered asynchronous writer, as extauth's logger
const log = pino({ level: 'info', base: { service: 'fair-floor' } }, pino.destination({ dest: 1, sync: false, minLength: 4096 }))
const registry = new Registry()
const decisions = new Counter({ name: 'floor_decisions_total', help: 'decisions by code', labelNames: ['code'], registers: [registry] })
const seconds = new Histogram({ name: 'floor_decision_seconds', help: 'decision latency', labelNames: ['code'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2], registers: [registry] })

const app = floorApp(async (request, reply) => {
  const body = request.body as { urn: string, transactionReferenceNumber: string, last4Digits: string, transactionAmount: string }
  const arrivedAtMs = Date.now()
  const deadlineAtMs = arrivedAtMs + deadlineMs
  let answered = false
  const finish = (code: string, replayed: boolean): void => {
    answered = true
    const latencyMs = Date.now() - arrivedAtMs
    decisions.inc({ code })
    seconds.observe({ code }, latencyMs / 1000)
    log.info({ reference: body.transactionReferenceNumber, urn: body.urn, code, replayed: replayed ? true : undefined, latencyMs }, 'decision')
    reply.send(answerFor(code as '00', body, answerCtx))
  }
  const timer = setTimeout(() => { if (!answered) finish('05', false) }, deadlineMs)
  const k = floorKeys(body.urn)
  coalescer.before(redis)
  store.floorDecide(k.customer, k.cards, k.decision(body.transactionReferenceNumber), body.last4Digits, body.transactionAmount, String(deadlineAtMs), String(RECORD_TTL_S))
    .then(([code, replayed]) => {
      clearTimeout(timer)
      if (!answered) finish(code, replayed === '1')
    }, () => {
      clearTimeout(timer)
      if (!answered) finish('05', false)
    })
  return reply
})

await redis.connect()
const seed: Scenario = { runId: env.FLOOR_SEED_RUN_ID ?? '', urns: Number(env.FLOOR_SEED_URNS ?? 0), declineEvery: 0, creditMinor: Number(env.FLOOR_SEED_CREDIT ?? 0) }
if (seed.runId !== '' && seed.urns > 0) {
  const p = redis.pipeline()
  for (let i = 0; i < seed.urns; i++) {
    const k = floorKeys(fundedUrn(seed, i))
    p.hset(k.customer, 'status', 'ACTIVE', 'available', String(seed.creditMinor))
    p.hset(k.cards, CARD_LAST4, 'ACTIVE')
  }
  await p.exec()
}
await serve(app, async () => { await redis.quit(); log.flush() })
