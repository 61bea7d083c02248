// The in-band control surface of a simulator, for tests and demos that run it out of process:
// POST /__sim/faults {route, fault}, DELETE /__sim/faults, GET /__sim/requests.
import type { FastifyInstance } from 'fastify'
import { checkFault, FaultError } from './faults.js'
import type { FaultBook } from './faults.js'

export function registerControlRoutes<R extends string> (app: FastifyInstance, book: FaultBook<R>): void {
  app.post('/__sim/faults', async (request, reply) => {
    const body = request.body as { route?: unknown, fault?: unknown } | null
    const route = body?.route
    if (route !== '*' && !book.isRoute(route)) {
      return reply.code(400).send({ error: 'unknown route', routes: book.routes })
    }
    try {
      book.set(route, checkFault(body?.fault))
    } catch (err) {
      if (err instanceof FaultError) return reply.code(400).send({ error: err.message })
      throw err
    }
    return reply.code(204).send()
  })

  app.delete('/__sim/faults', async (_request, reply) => {
    book.clear()
    return reply.code(204).send()
  })

  app.get('/__sim/requests', async () => ({ requests: book.allCounts() }))
}
