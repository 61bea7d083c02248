// Finding a decision (docs/operations/finding-a-decision.md): by reference alone, or searched by customer,
// outcome, rule and time, newest first with a stable cursor.
import type { FastifyInstance } from 'fastify'
import { apiError } from '../errors.js'
import { decodeCursor, type JournalReader } from '../journal/source.js'
import { TAGS } from './openapi.js'
import { journalAnswer } from './answer-docs.js'

interface SearchQuery { urn?: string, code?: string, reason?: string, rule?: string, from?: string, to?: string, limit?: number, cursor?: string }

export function timeOf (v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined
  const ms = Date.parse(v)
  if (!/^\d{4}-\d\d-\d\dT/.test(v) || !Number.isFinite(ms)) throw apiError('VALIDATION', `${name} must be an ISO 8601 date-time`)
  return ms
}

export async function journalRoutes (app: FastifyInstance, opts: { journal: JournalReader }): Promise<void> {
  app.get<{ Params: { ref: string } }>('/admin/v1/decisions/:ref', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.decisions],
      summary: 'Every journal entry of a reference, whatever the customer',
      answers: { 200: journalAnswer },
      errors: ['DECISION_NOT_FOUND'],
      params: { type: 'object', properties: { ref: { type: 'string', minLength: 1, maxLength: 50, description: 'the transactionReferenceNumber of the External Authorization request' } }, required: ['ref'] }
    }
  }, async (request) => {
    const items = await opts.journal.byReference(request.params.ref)
    if (items.length === 0) throw apiError('DECISION_NOT_FOUND', `no decision with reference ${request.params.ref}`)
    return { items }
  })

  app.get<{ Querystring: SearchQuery }>('/admin/v1/decisions', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.decisions],
      summary: 'Search the decision journal by customer, code, reason, rule and time (ISO 8601), newest first',
      answers: { 200: journalAnswer },
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          urn: { type: 'string', minLength: 1, maxLength: 20, description: 'only this customer\'s decisions' },
          code: { type: 'string', pattern: '^[0-9]{2}$', description: 'only decisions answered with this code (05, 51, ...)' },
          reason: { type: 'string', minLength: 1, maxLength: 40, description: 'only decisions with this reason word (rule, insufficient_funds, deadline, ...)' },
          rule: { type: 'string', minLength: 1, maxLength: 100, description: 'only decisions this rule decided' },
          from: { type: 'string', maxLength: 40, description: 'arrived at or after this instant, ISO 8601 (2026-11-21T09:00:00Z)' },
          to: { type: 'string', maxLength: 40, description: 'arrived before this instant, ISO 8601' },
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'entries a page, 1 to 100' },
          cursor: { type: 'string', maxLength: 400, description: 'the nextCursor of the page before, for the next page' }
        }
      }
    }
  }, async (request) => {
    const q = request.query
    if (q.cursor !== undefined && decodeCursor(q.cursor) === null) throw apiError('VALIDATION', 'cursor is not one this API gave')
    const fromMs = timeOf(q.from, 'from')
    const toMs = timeOf(q.to, 'to')
    return await opts.journal.search({
      limit: q.limit ?? 20,
      ...(q.urn !== undefined ? { urn: q.urn } : {}),
      ...(q.code !== undefined ? { code: q.code } : {}),
      ...(q.reason !== undefined ? { reason: q.reason } : {}),
      ...(q.rule !== undefined ? { rule: q.rule } : {}),
      ...(fromMs !== undefined ? { fromMs } : {}),
      ...(toMs !== undefined ? { toMs } : {}),
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {})
    })
  })
}
