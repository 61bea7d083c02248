// Liveness and readiness for the load balancer: ready means the store answers, the rules are loaded, the
// process is not overloaded and not shutting down.
import type { FastifyInstance } from 'fastify'
import type { Store } from '../store/types.js'
import { TAGS } from './openapi.js'

export interface HealthOptions {
  store: Store
  rulesLoaded: () => boolean
  shuttingDown: () => boolean
  /** with stand-in (STANDIN_POLICY_FILE): true while this instance can decide without the store */
  standInReady?: () => boolean
}

export async function healthRoutes (app: FastifyInstance, opts: HealthOptions): Promise<void> {
  app.get('/health/live', {
    schema: { tags: [TAGS.health], summary: 'Liveness: the process answers', answers: { 200: { description: 'alive', type: 'object', properties: { status: { const: 'ok' } } } } }
  }, async () => ({ status: 'ok' }))
  app.get('/health/ready', {
    schema: {
      tags: [TAGS.health],
      summary: 'Readiness: the store answers, the rules are loaded, not overloaded, not stopping',
      answers: {
        200: { description: 'ready', type: 'object', properties: { status: { const: 'ok' } } },
        503: {
          description: 'not ready: take the instance out of the pool',
          type: 'object',
          properties: { status: { const: 'unavailable' }, reasons: { type: 'array', items: { enum: ['store_unreachable', 'rules_not_loaded', 'overloaded', 'shutting_down'] } } }
        }
      }
    }
  }, async (_request, reply) => {
    const reasons: string[] = []
    // an instance that decides in stand-in stays in the pool: every instance loses the same store at once
    if (!opts.store.ready() && opts.standInReady?.() !== true) reasons.push('store_unreachable')
    if (!opts.rulesLoaded()) reasons.push('rules_not_loaded')
    if (typeof app.isUnderPressure === 'function' && app.isUnderPressure()) reasons.push('overloaded')
    if (opts.shuttingDown()) reasons.push('shutting_down')
    if (reasons.length > 0) {
      reply.code(503)
      return { status: 'unavailable', reasons }
    }
    return { status: 'ok' }
  })
}
