// The parked events (docs/api/events.md "Failed events"): listed, and sent again on an operator's word.
import type { FastifyInstance } from 'fastify'
import { apiError } from '../errors.js'
import type { Relay } from '../events/relay.js'
import { TAGS } from './openapi.js'
import type { Store } from '../store/types.js'
import { auditAfterChange } from './admin-auth.js'
import { noBody } from './admin-routes.js'

export async function eventsRoutes (app: FastifyInstance, opts: { relay?: Relay, store: Store }): Promise<void> {
  const relay = (): Relay => {
    if (opts.relay === undefined) throw apiError('NOT_CONFIGURED', 'events are not sent: WEBHOOK_URL is not set')
    return opts.relay
  }

  app.get('/admin/v1/events/failed', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.events],
      summary: 'The parked events: those the receiver did not take after every retry',
      answers: { 200: { description: 'the parked events, each with when it was parked, its attempts and last error', type: 'object', required: ['items'], properties: { items: { type: 'array', items: { type: 'object', required: ['id', 'type', 'parkedAt', 'attempts', 'lastError'] } } } } },
      errors: ['NOT_CONFIGURED']
    }
  }, async () => {
    const items = await relay().parkedEvents()
    return { items: items.map((p) => ({ ...p.event, parkedAt: new Date(p.parkedAtMs).toISOString(), attempts: p.attempts, lastError: p.lastError })) }
  })

  app.post<{ Params: { id: string } }>('/admin/v1/events/failed/:id/resend', {
    config: { scope: 'events' },
    schema: {
      tags: [TAGS.events],
      summary: 'Send a parked event again, now',
      answers: {
        200: { description: 'delivered; no longer parked', type: 'object', required: ['id', 'delivered'], properties: { id: { type: 'string' }, delivered: { const: true } } },
        502: { description: 'the receiver did not take it; it stays parked', type: 'object', required: ['id', 'delivered', 'lastError'], properties: { id: { type: 'string' }, delivered: { const: false }, lastError: { type: 'string' } } }
      },
      errors: ['NOT_FOUND', 'NOT_CONFIGURED'],
      params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 100, description: 'the event\'s id, as GET /admin/v1/events/failed lists it' } }, required: ['id'] },
      body: noBody
    }
  }, async (request, reply) => {
    const r = await relay().resend(request.params.id)
    if (!r.found) throw apiError('NOT_FOUND', `no parked event ${request.params.id}`)
    // not one store script: audited right after the attempt (docs/operations/admin-access.md)
    await auditAfterChange(opts.store, request, { outcome: r.ok ? 'delivered' : 'failed', before: { parked: true }, after: { parked: !r.ok } })
    if (!r.ok) return await reply.code(502).send({ id: request.params.id, delivered: false, lastError: r.detail })
    return { id: request.params.id, delivered: true }
  })
}
