// The floor of extauth's architecture, for bench/bench.ts: a bare Fastify server with the same body schema,
// validator settings, caller-header check and answer shape as POST /api/v1/externalAuth, and exactly one
// Redis round trip per request (EVALSHA of a one-line script on the customer's key), no decision logic and
// no logging. extauth's cost over this is what the decision pipeline, rules and the store's script add.
//   PORT, REDIS_URL, REDIS_KEY_PREFIX, EXTAUTH_CONSUMER_KEY, EXTAUTH_CLIENT_ID, EXTAUTH_BANK_ID
import { Redis } from 'ioredis'
import { WriteCoalescer } from '../src/store/coalesce-writes.js'
import { answerFor } from '../src/http/answer.js'
import { answerCtx, floorApp, serve } from './lib/floor-app.js'

const env = process.env
const prefix = env.REDIS_KEY_PREFIX ?? 'extauth-baseline:'

interface Touch { benchTouch: (key: string) => Promise<number> }
const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true })
redis.defineCommand('benchTouch', { numberOfKeys: 1, lua: "return redis.call('HINCRBY', KEYS[1], 'n', 1)" })
/** a turn's commands in one write, as extauth sends them (src/store/coalesce-writes.ts) */
const coalescer = new WriteCoalescer()
const touch = redis as unknown as Touch

const app = floorApp(async (request) => {
  const body = request.body as { urn: string }
  coalescer.before(redis)
  await touch.benchTouch(`${prefix}{${body.urn}}:n`)
  return answerFor('00', body, answerCtx)
})

await redis.connect()
await serve(app, async () => { await redis.quit() })
