// The audit trail (docs/operations/admin-access.md): who changed what, newest first, paged like the decision
// search; with the `read` scope.
import type { FastifyInstance } from 'fastify'
import { apiError } from '../errors.js'
import { decodeAuditCursor, type AuditReader } from '../access/audit-trail.js'
import { timeOf } from './journal-routes.js'
import { TAGS } from './openapi.js'

/** the answer, for the API document (http/openapi.ts) */
const auditAnswer = {
  description: 'audit records, newest first; pass nextCursor as cursor for the next page',
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'keyId', 'route', 'scope', 'requestId', 'target', 'outcome', 'before', 'after', 'atMs'],
        properties: {
          id: { type: 'string' },
          keyId: { type: 'string', description: 'the admin key\'s id, never the key' },
          route: { type: 'string', description: 'method and route pattern' },
          scope: { type: 'string' },
          requestId: { type: 'string', description: 'the call\'s x-request-id' },
          target: { type: 'object', additionalProperties: { type: 'string' }, description: 'ids only' },
          outcome: { type: 'string', description: 'done, refused, or the call\'s own outcome word' },
          before: { type: ['object', 'null'] },
          after: { type: ['object', 'null'] },
          atMs: { type: 'integer' },
          at: { type: 'string', format: 'date-time' }
        }
      }
    },
    nextCursor: { type: ['string', 'null'] }
  }
}

interface AuditQuery { from?: string, to?: string, keyId?: string, limit?: number, cursor?: string }

export async function auditRoutes (app: FastifyInstance, opts: { trail: AuditReader }): Promise<void> {
  app.get<{ Querystring: AuditQuery }>('/admin/v1/audit', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.audit],
      summary: 'The audit trail by time (ISO 8601) and key id, newest first',
      answers: { 200: auditAnswer },
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          from: { type: 'string', maxLength: 40, description: 'recorded at or after this instant, ISO 8601 (2026-11-21T09:00:00Z)' },
          to: { type: 'string', maxLength: 40, description: 'recorded before this instant, ISO 8601' },
          keyId: { type: 'string', minLength: 1, maxLength: 64, description: 'only the calls of this admin key (its id; ADMIN_TOKEN for the token)' },
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'records a page, 1 to 100' },
          // a cursor holds the last record given, as stored
          cursor: { type: 'string', maxLength: 16384, description: 'the nextCursor of the page before, for the next page' }
        }
      }
    }
  }, async (request) => {
    const q = request.query
    if (q.cursor !== undefined && decodeAuditCursor(q.cursor) === null) throw apiError('VALIDATION', 'cursor is not one this API gave')
    const fromMs = timeOf(q.from, 'from')
    const toMs = timeOf(q.to, 'to')
    return await opts.trail.search({
      limit: q.limit ?? 20,
      ...(q.keyId !== undefined ? { keyId: q.keyId } : {}),
      ...(fromMs !== undefined ? { fromMs } : {}),
      ...(toMs !== undefined ? { toMs } : {}),
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {})
    })
  })
}
