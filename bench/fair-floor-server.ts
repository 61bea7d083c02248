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

const env = process.env
const prefix = env.REDIS_KEY_PREFIX ?? 'extauth-fair-floor:'
const deadlineMs = Number(env.DECISION_DEADLINE_MS ?? 2000)
const RECORD_TTL_S = 8 * 24 * 3600

/** Keys of one customer share a hash tag, as extauth's do; decision records are `<prefix>{urn}:d:<reference>`. */
const floorKeys = (urn: string): { customer: string, cards: string, decision: (reference: string) => string } => ({
  customer: `${prefix}{${urn}}:c`,
  cards: `${prefix}{${urn}}:k`,
  decision: (reference) => `${prefix}{${urn}}:d:${reference}`
})

// KEYS[1] customer hash (status, available)  KEYS[2] cards hash (last4 -> status)  KEYS[3] decision record
// ARGV[1] last4  ARGV[2] debit (minor units)  ARGV[3] deadline epoch ms  ARGV[4] record TTL s
// Returns {code, replayed '0'|'1'}. The record is "code|debit|last4": a replay with the same amount and card
// gets the stored code, another amount or card a conflict (05).
const DECIDE_LUA = `
local rec = redis.call('GET', KEYS[3])
local fp = ARGV[2] .. '|' .. ARGV[1]
if rec then
  if string.sub(rec, 4) ~= fp then return {'05', '0'} end
  return {string.sub(rec, 1, 2), '1'}
end
local code = '00'
local c = redis.call('HMGET', KEYS[1], 'status', 'available')
if not c[1] then code = '14'
elseif c[1] ~= 'ACTIVE' then code = '05'
else
  local card = redis.call('HGET', KEYS[2], ARGV[1])
  if card ~= 'ACTIVE' then code = '05'
  elseif tonumber(c[2]) < tonumber(ARGV[2]) then code = '51' end
end
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[3]) then code = '05' end
if code == '00' and ARGV[2] ~= '0' then redis.call('HINCRBY', KEYS[1], 'available', '-' .. ARGV[2]) end
redis.call('SET', KEYS[3], code .. '|' .. fp, 'EX', ARGV[4])
return {code, '0'}
`

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
