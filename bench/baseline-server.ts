// The floor of extauth's architecture, for bench/bench.ts: a bare Fastify server with the same body schema,
// validator settings, caller-header check and answer shape as POST /api/v1/externalAuth, and exactly one
// Redis round trip per request (EVALSHA of a one-line script on the customer's key), no decision logic and
// no logging. extauth's cost over this is what the decision pipeline, rules and the store's script add.
//   PORT, REDIS_URL, REDIS_KEY_PREFIX, EXTAUTH_CONSUMER_KEY, EXTAUTH_CLIENT_ID, EXTAUTH_BANK_ID
import Fastify from 'fastify'
import { Ajv } from 'ajv'
import { Redis } from 'ioredis'
import { answerSchema, authRequestSchema } from '../src/http/auth-schema.js'
import { answerFor } from '../src/http/answer.js'
import { failedHeader } from '../src/http/caller-checks.js'

const env = process.env
const prefix = env.REDIS_KEY_PREFIX ?? 'extauth-baseline:'
const headers = { consumerKey: env.EXTAUTH_CONSUMER_KEY ?? '', clientId: env.EXTAUTH_CLIENT_ID ?? '', bankId: env.EXTAUTH_BANK_ID ?? '', entityIds: [] }
const answerCtx = { timezone: 'UTC', defaultCurrency: '356', clock: Date.now }

// the route's settings (src/http/external-auth-route.ts)
const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: true })

interface Touch { benchTouch: (key: string) => Promise<number> }
const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true })
redis.defineCommand('benchTouch', { numberOfKeys: 1, lua: "return redis.call('HINCRBY', KEYS[1], 'n', 1)" })
const touch = redis as unknown as Touch

const app = Fastify({ logger: false, bodyLimit: 16 * 1024, return503OnClosing: false })
app.addHook('onRequest', async (request, reply) => {
  if (request.routeOptions.url !== '/api/v1/externalAuth') return
  if (failedHeader(request.headers, headers) !== null) return await reply.code(401).send(answerFor('05', undefined, answerCtx))
})
app.get('/health/ready', async () => ({ status: 'ok' }))
app.post('/api/v1/externalAuth', {
  schema: { body: authRequestSchema, response: { '2xx': answerSchema, '4xx': answerSchema } },
  validatorCompiler: ({ schema }) => ajv.compile(schema),
  bodyLimit: 16 * 1024
}, async (request) => {
  const body = request.body as { urn: string }
  await touch.benchTouch(`${prefix}{${body.urn}}:n`)
  return answerFor('00', body, answerCtx)
})

await redis.connect()
await app.listen({ host: '127.0.0.1', port: Number(env.PORT ?? 0) })

process.once('SIGTERM', () => {
  void (async () => {
    await app.close()
    await redis.quit()
    process.exit(0)
  })()
})
