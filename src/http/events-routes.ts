// The parked events (docs/api/events.md "Failed events"): listed, and sent again on an operator's word.
import type { FastifyInstance } from 'fastify'
import { apiError } from '../errors.js'
import type { Relay } from '../events/relay.js'

export async function eventsRoutes (app: FastifyInstance, opts: { relay?: Relay }): Promise<void> {
  const relay = (): Relay => {
    if (opts.relay === undefined) throw apiError('NOT_CONFIGURED', 'events are not sent: WEBHOOK_URL is not set')
    return opts.relay
  }

  app.get('/admin/v1/events/failed', async () => {
    const items = await relay().parkedEvents()
    return { items: items.map((p) => ({ ...p.event, parkedAt: new Date(p.parkedAtMs).toISOString(), attempts: p.attempts, lastError: p.lastError })) }
  })

  app.post<{ Params: { id: string } }>('/admin/v1/events/failed/:id/resend', {
    schema: { params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 100 } }, required: ['id'] } }
  }, async (request, reply) => {
    const r = await relay().resend(request.params.id)
    if (!r.found) throw apiError('NOT_FOUND', `no parked event ${request.params.id}`)
    if (!r.ok) return await reply.code(502).send({ id: request.params.id, delivered: false, lastError: r.detail })
    return { id: request.params.id, delivered: true }
  })
}
