// Liveness and readiness for the load balancer: ready means the store answers, the rules are loaded, the
// process is not overloaded and not shutting down.
import type { FastifyInstance } from 'fastify'
import type { Store } from '../store/types.js'

export interface HealthOptions {
  store: Store
  rulesLoaded: () => boolean
  shuttingDown: () => boolean
}

export async function healthRoutes (app: FastifyInstance, opts: HealthOptions): Promise<void> {
  app.get('/health/live', async () => ({ status: 'ok' }))
  app.get('/health/ready', async (_request, reply) => {
    const reasons: string[] = []
    if (!opts.store.ready()) reasons.push('store_unreachable')
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
