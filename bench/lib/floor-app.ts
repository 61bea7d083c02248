// What both floors of bench/bench.ts share with POST /api/v1/externalAuth (src/http/external-auth-route.ts):
// the Fastify settings, the caller-header check, the body schema with the route's validator settings, and
// the answer shape; plus the readiness route the bench waits on. The floors differ only in their handler.
import Fastify, { type FastifyInstance, type RouteHandlerMethod } from 'fastify'
import { Ajv } from 'ajv'
import { answerSchema, authRequestSchema } from '../../src/http/auth-schema.js'
import { answerFor } from '../../src/http/answer.js'
import { failedHeader } from '../../src/http/caller-checks.js'

const env = process.env
export const answerCtx = { timezone: 'UTC', defaultCurrency: '356', clock: Date.now }
const headers = { consumerKey: env.EXTAUTH_CONSUMER_KEY ?? '', clientId: env.EXTAUTH_CLIENT_ID ?? '', bankId: env.EXTAUTH_BANK_ID ?? '', entityIds: [] }

// the route's settings: no coercion, no defaults, unknown fields kept
const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: true })

/** The floor's Fastify app with `handler` on the decision route; EXTAUTH_CONSUMER_KEY, EXTAUTH_CLIENT_ID, EXTAUTH_BANK_ID. */
export function floorApp (handler: RouteHandlerMethod): FastifyInstance {
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
  }, handler)
  return app
}

/** Listens on PORT (loopback) until SIGTERM, then closes the app and `then`, and exits 0. */
export async function serve (app: FastifyInstance, then: () => Promise<void>): Promise<void> {
  await app.listen({ host: '127.0.0.1', port: Number(env.PORT ?? 0) })
  process.once('SIGTERM', () => {
    void (async () => {
      await app.close()
      await then()
      process.exit(0)
    })()
  })
}
