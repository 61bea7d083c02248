// The admin listener's API (README "Admin API"): customers, cards, money, decisions, reversals, rules. Errors are
// JSON {error, message} with a stable error code.
import type { FastifyInstance, FastifyError } from 'fastify'
import { API_ERRORS, apiAnswerOf, apiError, errorBody, StoreRejection } from '../errors.js'
import { constantTimeEqual } from './caller-checks.js'
import { asApiError } from './lifecycle-routes.js'
import { CARD_STATUSES, CUSTOMER_STATUSES, type Customer, type Store } from '../store/types.js'
import { amountOf, amountSchema } from './amount.js'
import type { CompiledRuleSet } from '../rules/types.js'
import type { ReloadResult } from '../rules/manager.js'

export interface RulesControl {
  current: () => CompiledRuleSet
  reload: () => Promise<ReloadResult>
  loadedAt: () => number | null
}

export interface AdminOptions {
  token: string
  store: Store
  rules: RulesControl
}

export const urnParam = { type: 'string', minLength: 1, maxLength: 20 }
export const last4Param = { type: 'string', pattern: '^[0-9]{4}$' }
const refParam = { type: 'string', minLength: 1, maxLength: 50 }
/**
 * A credit or debit reference: no ':' so it can never be taken for one of the card-lifecycle's own money
 * operations (`load:<ref>`, `transfer:<id>`), which share the idempotency keys.
 */
const moneyRef = { type: 'string', minLength: 1, maxLength: 50, pattern: '^[^:]+$' }
function customerView (c: Customer): Record<string, unknown> {
  return { urn: c.urn, customerId: c.customerId, status: c.status, available: String(c.available), cards: c.cards }
}

/** Fastify's own refusals (schema, body parsing, content type) in the catalogue's words. */
function frameworkError (err: FastifyError): unknown {
  if (err.validation !== undefined) return apiError('VALIDATION', err.message)
  if (err.statusCode === 404) return apiError('NOT_FOUND', err.message)
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) return apiError('BAD_REQUEST', err.message)
  return null
}

export async function adminRoutes (app: FastifyInstance, opts: AdminOptions): Promise<void> {
  const { store } = opts

  app.addHook('onRequest', async (request, reply) => {
    if (request.url === '/metrics') return
    const h = request.headers.authorization
    const given = typeof h === 'string' && h.startsWith('Bearer ') ? h.slice(7) : ''
    if (!constantTimeEqual(given, opts.token) || given === '') {
      return await reply.code(API_ERRORS.UNAUTHORIZED).send(errorBody('UNAUTHORIZED', 'Authorization: Bearer <ADMIN_TOKEN> required'))
    }
  })

  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const ours = apiAnswerOf(asApiError(err)) ?? apiAnswerOf(frameworkError(err))
    if (ours !== null) {
      reply.code(ours.status)
      return ours.body
    }
    request.log.error({ err }, 'admin call failed')
    reply.code(API_ERRORS.UNAVAILABLE)
    return errorBody('UNAVAILABLE', 'the store did not answer; try again')
  })

  app.setNotFoundHandler(async (_request, reply) => {
    reply.code(API_ERRORS.NOT_FOUND)
    return errorBody('NOT_FOUND', 'no such route')
  })

  app.put<{ Params: { urn: string }, Body: { customerId?: string, status?: typeof CUSTOMER_STATUSES[number] } }>('/admin/v1/customers/:urn', {
    schema: {
      params: { type: 'object', properties: { urn: urnParam } },
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { customerId: { type: 'string', maxLength: 50 }, status: { type: 'string', enum: CUSTOMER_STATUSES } }
      }
    }
  }, async (request) => {
    const b = request.body ?? {}
    return customerView(await store.putCustomer(request.params.urn, {
      ...(b.customerId !== undefined ? { customerId: b.customerId } : {}),
      ...(b.status !== undefined ? { status: b.status } : {})
    }))
  })

  app.put<{ Params: { urn: string, last4: string }, Body: { status: typeof CARD_STATUSES[number] } }>('/admin/v1/customers/:urn/cards/:last4', {
    schema: {
      params: { type: 'object', properties: { urn: urnParam, last4: { type: 'string', pattern: '^[0-9]{4}$' } } },
      body: { type: 'object', required: ['status'], additionalProperties: false, properties: { status: { type: 'string', enum: CARD_STATUSES } } }
    }
  }, async (request) => customerView(await store.putCard(request.params.urn, request.params.last4, request.body.status)))

  app.get<{ Params: { urn: string } }>('/admin/v1/customers/:urn', {
    schema: { params: { type: 'object', properties: { urn: urnParam } } }
  }, async (request) => {
    const c = await store.getCustomer(request.params.urn)
    if (c === null) throw new StoreRejection('CUSTOMER_NOT_FOUND', `no customer ${request.params.urn}`)
    return customerView(c)
  })

  for (const kind of ['credits', 'debits'] as const) {
    app.post<{ Params: { urn: string }, Body: { amount: string | number, reference: string } }>(`/admin/v1/customers/:urn/${kind}`, {
      schema: {
        params: { type: 'object', properties: { urn: urnParam } },
        body: { type: 'object', required: ['amount', 'reference'], additionalProperties: false, properties: { amount: amountSchema, reference: moneyRef } }
      }
    }, async (request) => {
      const amount = amountOf(request.body.amount)
      const { urn } = request.params
      const r = kind === 'credits'
        ? await store.credit(urn, amount, request.body.reference)
        : await store.debit(urn, amount, request.body.reference)
      return { urn, reference: request.body.reference, amount: String(amount), available: String(r.available), replayed: r.replayed }
    })
  }

  app.get<{ Params: { urn: string, ref: string } }>('/admin/v1/customers/:urn/decisions/:ref', {
    schema: { params: { type: 'object', properties: { urn: urnParam, ref: refParam } } }
  }, async (request) => {
    const rec = await store.getDecision(request.params.urn, request.params.ref)
    if (rec === null) throw new StoreRejection('DECISION_NOT_FOUND', `no decision ${request.params.ref} for ${request.params.urn}`)
    const { attempt: _attempt, fingerprint: _fp, limitEntries: _le, ...pub } = rec
    return pub
  })

  app.post<{ Params: { urn: string, ref: string }, Body: { amount?: string | number } | null }>('/admin/v1/customers/:urn/decisions/:ref/reversal', {
    schema: {
      params: { type: 'object', properties: { urn: urnParam, ref: refParam } },
      body: { type: ['object', 'null'], additionalProperties: false, properties: { amount: amountSchema } }
    }
  }, async (request) => {
    const amount = request.body?.amount === undefined ? null : amountOf(request.body.amount)
    const r = await store.reverse(request.params.urn, request.params.ref, amount)
    return { urn: request.params.urn, reference: request.params.ref, released: String(r.released), available: String(r.available), replayed: r.replayed }
  })

  app.get('/admin/v1/rules', async () => {
    const set = opts.rules.current()
    const at = opts.rules.loadedAt()
    return { version: set.version, loadedAt: at === null ? null : new Date(at).toISOString(), rules: set.rules }
  })

  app.post('/admin/v1/rules/reload', async (_request, reply) => {
    const r = await opts.rules.reload()
    if (!r.ok) {
      reply.code(API_ERRORS.RULES_INVALID)
      return { ...errorBody('RULES_INVALID', 'rule set refused; the running set stays'), errors: r.errors, version: opts.rules.current().version }
    }
    return { version: r.version, rules: r.rules }
  })
}
