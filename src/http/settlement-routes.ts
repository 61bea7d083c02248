// The settlement's admin routes (docs/api/admin.md, Settlement): statements imported and their reports, and
// the reconciliation exceptions an operator works.
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { Store } from '../store/types.js'
import { apiError } from '../errors.js'
import { auditContext } from './admin-auth.js'
import { amountOf, amountSchema } from './amount.js'
import { TAGS } from './openapi.js'
import { urnParam } from './admin-routes.js'
import { settlementFor } from '../settlement/for-store.js'
import { importStatement } from '../settlement/import.js'
import { isIsoTime, isStatementId } from '../settlement/statement-reader.js'
import type { StatementMap } from '../settlement/statement-maps.js'
import { resolveException } from '../settlement/resolve.js'
import { settlementMetrics } from '../settlement/metrics.js'
import { holdExpiryOf, type SettlementConfig } from '../settlement/config.js'
import { EXCEPTION_KINDS, RESOLVE_ACTIONS, type ResolveAction } from '../settlement/types.js'

/** the largest statement the route takes (a million lines of extauth-v1 are about 200 MB) */
export const STATEMENT_BODY_BYTES_MAX = 1024 * 1024 * 1024
const STATEMENT_TYPES = ['application/x-ndjson', 'application/jsonl', 'text/csv', 'text/plain', 'application/octet-stream']

export function holdExpiryFor (c: SettlementConfig): (mcc: string | undefined, nowMs: number) => number | undefined {
  return (mcc, nowMs) => holdExpiryOf(c, mcc, nowMs)
}

export interface SettlementRouteOptions {
  store: Store
  maps: Record<string, StatementMap>
  /** SETTLEMENT_GRACE (absent: approved_not_posted is not looked for) */
  graceMs?: number
  registry: Registry
}

const counted = { type: 'object', properties: { count: { type: 'integer' }, amount: { type: 'string', pattern: '^[0-9]+$' } } }
const reportAnswer = {
  description: 'the statement\'s report',
  type: 'object',
  required: ['id', 'from', 'to', 'complete', 'lines', 'applied', 'duplicates', 'conflicts', 'outcomes', 'exceptions'],
  properties: {
    id: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    complete: { type: 'boolean' },
    lines: { type: 'integer', description: 'postings in the file' },
    applied: { type: 'integer', description: 'postings this statement applied (in this import or an earlier one of it)' },
    duplicates: { type: 'integer', description: 'postings another statement had applied (an overlap): not applied again' },
    conflicts: { type: 'integer', description: 'lines whose platformId was applied with other content: not applied' },
    outcomes: { type: 'object', description: 'outcome -> {count, amount}', additionalProperties: counted },
    exceptions: { type: 'integer', description: 'exceptions its postings opened' },
    dryRun: { type: 'boolean', description: 'true: checked only, nothing applied' }
  }
}
const exceptionAnswer = {
  type: 'object',
  required: ['id', 'kind', 'status', 'urn', 'reference', 'platformId', 'statementId', 'amount', 'accept'],
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: EXCEPTION_KINDS },
    status: { type: 'string', enum: ['open', 'resolved'] },
    urn: { type: 'string' },
    reference: { type: 'string' },
    platformId: { type: 'string' },
    statementId: { type: 'string' },
    postingType: { type: 'string' },
    outcome: { type: 'string' },
    amount: { type: 'string', pattern: '^[0-9]+$' },
    accept: { type: 'object', description: 'what the action accept does', properties: { action: { type: 'string', enum: ['none', 'credit', 'debit', 'release'] }, amount: { type: 'string' } } },
    detail: { type: 'string' },
    resolution: { type: 'object', properties: { action: { type: 'string', enum: RESOLVE_ACTIONS }, amount: { type: 'string' }, reason: { type: 'string' }, keyId: { type: 'string' } } }
  }
}

const exceptionId = { type: 'string', minLength: 1, maxLength: 120, description: 'the exception\'s id, as listed (b<bucket>~<platformId>…)' }

export async function settlementRoutes (app: FastifyInstance, o: SettlementRouteOptions): Promise<void> {
  const settlement = settlementFor(o.store)
  const metrics = settlementMetrics(o.registry, () => settlement)

  await app.register(async (s) => {
    // the body is the file, streamed to a temporary file (read twice: checked whole, then applied)
    s.addContentTypeParser(STATEMENT_TYPES, (_request, payload, done) => { done(null, payload) })
    s.post<{ Querystring: { map?: string, id?: string, from?: string, to?: string, complete?: string, dryRun?: string } }>('/admin/v1/statements', {
      config: { scope: 'money:write' },
      schema: {
        tags: [TAGS.settlement],
        summary: 'Import the platform\'s statement (the body is the file: extauth-v1 NDJSON, or a CSV with ?map=)',
        description: 'Checked whole first: one bad line and nothing is applied (422 STATEMENT_INVALID with each bad line and why). Each posting applies once by its platformId. docs/operations/settlement.md',
        errors: ['STATEMENT_INVALID'],
        answers: { 200: reportAnswer },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            map: { type: 'string', description: 'a named map of STATEMENT_MAPS_FILE (another layout than extauth-v1)' },
            id: { type: 'string', description: 'a mapped statement\'s id (extauth-v1 carries its own)' },
            from: { type: 'string', description: 'a mapped statement\'s period start, ISO 8601 (default: its first postedAt)' },
            to: { type: 'string', description: 'a mapped statement\'s period end, ISO 8601 (default: its last postedAt)' },
            complete: { type: 'string', enum: ['true', 'false'], description: 'a mapped statement holds every posting of its period' },
            dryRun: { type: 'string', enum: ['true', 'false'], description: 'check only, apply nothing' }
          }
        }
      }
    }, async (request) => {
      const q = request.query
      const map = q.map === undefined ? undefined : o.maps[q.map]
      if (q.map !== undefined && map === undefined) throw apiError('VALIDATION', `no map "${q.map}" in STATEMENT_MAPS_FILE`, { field: 'map' })
      if (q.id !== undefined && !isStatementId(q.id)) throw apiError('VALIDATION', 'id must be 1 to 64 letters, digits or ._:-', { field: 'id' })
      for (const f of ['from', 'to'] as const) if (q[f] !== undefined && !isIsoTime(q[f])) throw apiError('VALIDATION', `${f} must be an ISO 8601 time`, { field: f })
      const body = request.body as Readable | null
      if (body === null || typeof body.pipe !== 'function') throw apiError('BAD_REQUEST', `send the statement as the body, with content-type ${STATEMENT_TYPES.slice(0, 3).join(' or ')}`)
      const dir = await mkdtemp(join(tmpdir(), 'extauth-statement-'))
      try {
        const file = join(dir, 'statement')
        let bytes = 0
        await pipeline(body, new Transform({
          transform (chunk: Buffer, _enc, cb) {
            bytes += chunk.length
            if (bytes > STATEMENT_BODY_BYTES_MAX) { cb(apiError('BAD_REQUEST', `a statement is at most ${STATEMENT_BODY_BYTES_MAX} bytes`)); return }
            cb(null, chunk)
          }
        }), createWriteStream(file))
        const r = await importStatement({
          store: o.store,
          settlement,
          file,
          ...(map !== undefined ? { map } : {}),
          header: { ...(q.id !== undefined ? { id: q.id } : {}), ...(q.from !== undefined ? { from: q.from } : {}), ...(q.to !== undefined ? { to: q.to } : {}), ...(q.complete !== undefined ? { complete: q.complete === 'true' } : {}) },
          dryRun: q.dryRun === 'true',
          ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
          onPosting: (p) => { if (p.status === 'applied') metrics.postings.inc({ outcome: p.outcome }) }
        })
        if (!r.ok) throw apiError('STATEMENT_INVALID', `${r.errors.length} bad line(s); nothing was applied`, { lines: r.errors as unknown as string })
        return { ...r.report, dryRun: r.dryRun }
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    })
  })

  app.get<{ Params: { id: string } }>('/admin/v1/statements/:id', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.settlement],
      summary: 'A statement\'s report: lines, postings applied, outcomes with count and amount, exceptions opened',
      errors: ['STATEMENT_NOT_FOUND'],
      answers: { 200: reportAnswer },
      params: { type: 'object', properties: { id: { type: 'string', description: 'the statement\'s id' } } }
    }
  }, async (request) => {
    const r = await settlement.getStatement(request.params.id)
    if (r === null) throw apiError('STATEMENT_NOT_FOUND', `no statement ${request.params.id}`)
    return r
  })

  app.get<{ Querystring: { status?: 'open' | 'resolved', kind?: string, urn?: string, limit?: number, cursor?: string } }>('/admin/v1/reconciliation/exceptions', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.settlement],
      summary: 'Reconciliation exceptions, newest first, paged: {items, nextCursor}',
      answers: { 200: { description: 'a page of exceptions', type: 'object', required: ['items', 'nextCursor'], properties: { items: { type: 'array', items: exceptionAnswer }, nextCursor: { type: ['string', 'null'] } } } },
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          status: { type: 'string', enum: ['open', 'resolved'], description: 'only those open, or only those resolved (default: both)' },
          kind: { type: 'string', enum: EXCEPTION_KINDS, description: 'only this kind' },
          urn: urnParam,
          limit: { type: 'integer', minimum: 1, maximum: 500, default: 50, description: 'at most this many' },
          cursor: { type: 'string', description: 'nextCursor of the page before' }
        }
      }
    }
  }, async (request) => {
    const q = request.query
    return await settlement.listExceptions({
      limit: q.limit ?? 50,
      ...(q.status !== undefined ? { status: q.status } : {}),
      ...(q.kind !== undefined ? { kind: q.kind } : {}),
      ...(q.urn !== undefined ? { urn: q.urn } : {}),
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {})
    })
  })

  app.post<{ Params: { id: string }, Body: { action: ResolveAction, amount?: string | number, reason: string } }>('/admin/v1/reconciliation/exceptions/:id/resolve', {
    config: { scope: 'money:write' },
    schema: {
      tags: [TAGS.settlement],
      summary: 'Resolve an exception: accept the platform\'s amount, release the hold, credit, debit or write off; idempotent, audited',
      answers: { 200: { description: 'resolved, or (replayed) resolved before with the same action', ...exceptionAnswer, properties: { ...exceptionAnswer.properties, replayed: { type: 'boolean' } } } },
      errors: ['EXCEPTION_NOT_FOUND', 'ALREADY_RESOLVED', 'INSUFFICIENT_FUNDS', 'DECISION_NOT_FOUND', 'EXCEEDS_HOLD', 'ALREADY_REVERSED', 'NOT_APPROVED'],
      params: { type: 'object', properties: { id: exceptionId } },
      body: {
        type: 'object',
        required: ['action', 'reason'],
        additionalProperties: false,
        properties: {
          action: { type: 'string', enum: RESOLVE_ACTIONS, description: 'accept: what the exception\'s accept says; release: the authorization\'s hold; credit, debit: the amount; writeOff: close, nothing moved' },
          amount: { ...amountSchema, description: 'credit and debit: the amount (minor units); release: part of the hold (default all)' },
          reason: { type: 'string', minLength: 1, maxLength: 500, description: 'why, for the audit trail' }
        },
        examples: [{ action: 'accept', reason: 'platform books confirmed' }]
      }
    }
  }, async (request) => {
    const b = request.body
    const amount = b.amount === undefined ? undefined : amountOf(b.amount)
    const key = request.adminKey
    const audit = auditContext(request, { action: b.action, reason: b.reason, ...(amount !== undefined ? { amount: String(amount) } : {}) })
    const r = await resolveException(o.store, settlement, request.params.id, { action: b.action, reason: b.reason, ...(amount !== undefined ? { amount } : {}) }, key?.id ?? '', audit)
    return { ...r.exception, replayed: r.replayed }
  })
}
