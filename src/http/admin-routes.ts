// The admin listener's API (README "Admin API"): customers, cards, money, decisions, reversals, rules. Errors are
// JSON {error, message} with a stable error code.
import type { FastifyInstance, FastifyError, FastifySchemaValidationError } from 'fastify'
import { API_ERRORS, apiAnswerOf, apiError, errorBody, StoreRejection } from '../errors.js'
import { auditAfterChange, auditContext } from './admin-auth.js'
import { asApiError } from './lifecycle-routes.js'
import { CARD_STATUSES, CUSTOMER_STATUSES, type Customer, type Store } from '../store/types.js'
import { amountOf, amountSchema } from './amount.js'
import { wordedErrors } from './worded-errors.js'
import type { CompiledRuleSet } from '../rules/types.js'
import type { ReloadResult } from '../rules/manager.js'
import { TAGS } from './openapi.js'
import { decisionEntryOf } from '../store/decision-entry.js'
import { customerAnswer, decisionAnswer, moneyAnswer, reversalAnswer, rulesAnswer, rulesRefused } from './answer-docs.js'

export interface RulesControl {
  current: () => CompiledRuleSet
  reload: () => Promise<ReloadResult>
  loadedAt: () => number | null
}

export interface AdminOptions {
  store: Store
  rules: RulesControl
}

export const urnParam = { type: 'string', minLength: 1, maxLength: 20, description: 'the customer: the urn of the External Authorization request' }
export const last4Param = { type: 'string', pattern: '^[0-9]{4}$', description: 'the card: the last four digits of its number (last4Digits of the External Authorization request)' }
const refParam = { type: 'string', minLength: 1, maxLength: 50, description: 'the transactionReferenceNumber of the External Authorization request' }
/** The body of a call that takes none: nothing, or `{}` (anything else is a mistake to report). */
export const noBody = { type: ['object', 'null'], additionalProperties: false, description: 'none (or {})', examples: [{}] }
/**
 * A credit or debit reference: no ':' so it can never be taken for one of the card-lifecycle's own money
 * operations (`load:<ref>`, `transfer:<id>`), which share the idempotency keys.
 */
const moneyRef = { type: 'string', minLength: 1, maxLength: 50, pattern: '^[^:]+$', description: 'your reference of this credit or debit (no `:`): the same reference again is a replay, with another amount a conflict' }
function customerView (c: Customer): Record<string, unknown> {
  return { urn: c.urn, customerId: c.customerId, status: c.status, available: String(c.available), held: String(c.held), ledger: String(c.available + c.held), cards: c.cards }
}

/**
 * The message of a refused request part, as Fastify writes it, with the name of a field the schema does not
 * know (the validator leaves it out: "body must NOT have additional properties").
 */
export function schemaErrors (errors: FastifySchemaValidationError[], dataVar: string): Error {
  return new Error(wordedErrors(errors).map((e) => {
    const unknown = e.keyword === 'additionalProperties' ? ` ("${String(e.params.additionalProperty)}")` : ''
    return `${dataVar}${e.instancePath} ${e.message}${unknown}`
  }).join(', '))
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

  app.put<{ Params: { urn: string }, Body: { customerId?: string, status?: typeof CUSTOMER_STATUSES[number] } | null }>('/admin/v1/customers/:urn', {
    config: { scope: 'customers:write' },
    schema: {
      tags: [TAGS.customers],
      summary: 'Create or update a customer',
      answers: { 200: customerAnswer },
      params: { type: 'object', properties: { urn: urnParam } },
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: {
          customerId: { type: 'string', maxLength: 50, description: 'the customer\'s id on the prepaid platform (an unload sends it)' },
          status: { type: 'string', enum: CUSTOMER_STATUSES, description: 'ACTIVE (the default for a new customer); BLOCKED and CLOSED decline every authorization' }
        },
        examples: [{ customerId: 'CUST1', status: 'ACTIVE' }]
      }
    }
  }, async (request) => {
    const b = request.body ?? {}
    return customerView(await store.putCustomer(request.params.urn, {
      ...(b.customerId !== undefined ? { customerId: b.customerId } : {}),
      ...(b.status !== undefined ? { status: b.status } : {})
    }, auditContext(request)))
  })

  app.put<{ Params: { urn: string, last4: string }, Body: { status: typeof CARD_STATUSES[number] } }>('/admin/v1/customers/:urn/cards/:last4', {
    config: { scope: 'customers:write' },
    schema: {
      tags: [TAGS.customers],
      summary: 'Register or update a card',
      answers: { 200: customerAnswer },
      errors: ['CUSTOMER_NOT_FOUND'],
      params: { type: 'object', properties: { urn: urnParam, last4: last4Param } },
      body: {
        type: 'object',
        required: ['status'],
        additionalProperties: false,
        properties: { status: { type: 'string', enum: CARD_STATUSES, description: 'ACTIVE; LOST, STOLEN and BLOCKED decline the card\'s authorizations' } },
        examples: [{ status: 'ACTIVE' }]
      }
    }
  }, async (request) => customerView(await store.putCard(request.params.urn, request.params.last4, request.body.status, auditContext(request))))

  app.get<{ Params: { urn: string } }>('/admin/v1/customers/:urn', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.customers],
      summary: 'A customer: status, available funds and cards',
      answers: { 200: customerAnswer },
      errors: ['CUSTOMER_NOT_FOUND'],
      params: { type: 'object', properties: { urn: urnParam } }
    }
  }, async (request) => {
    const c = await store.getCustomer(request.params.urn)
    if (c === null) throw new StoreRejection('CUSTOMER_NOT_FOUND', `no customer ${request.params.urn}`)
    return customerView(c)
  })

  for (const kind of ['credits', 'debits'] as const) {
    app.post<{ Params: { urn: string }, Body: { amount: string | number, reference: string } }>(`/admin/v1/customers/:urn/${kind}`, {
      config: { scope: 'money:write' },
      schema: {
        tags: [TAGS.customers],
        summary: kind === 'credits' ? 'Add funds; idempotent on the reference' : 'Remove funds; idempotent on the reference, never below zero',
        answers: { 200: moneyAnswer },
        errors: ['CUSTOMER_NOT_FOUND', 'REFERENCE_CONFLICT', kind === 'credits' ? 'BALANCE_LIMIT' : 'INSUFFICIENT_FUNDS'],
        params: { type: 'object', properties: { urn: urnParam } },
        body: {
          type: 'object',
          required: ['amount', 'reference'],
          additionalProperties: false,
          properties: { amount: { ...amountSchema, description: `the amount ${kind === 'credits' ? 'added' : 'removed'}, in minor units: a digit string or an integer ("5000" is 50.00)` }, reference: moneyRef },
          examples: [{ amount: '5000', reference: kind === 'credits' ? 'topup-1' : 'fee-1' }]
        }
      }
    }, async (request) => {
      const amount = amountOf(request.body.amount)
      const { urn } = request.params
      const audit = auditContext(request, { reference: request.body.reference, amount: String(amount) })
      const r = kind === 'credits'
        ? await store.credit(urn, amount, request.body.reference, undefined, audit)
        : await store.debit(urn, amount, request.body.reference, undefined, audit)
      return { urn, reference: request.body.reference, amount: String(amount), available: String(r.available), replayed: r.replayed }
    })
  }

  app.get<{ Params: { urn: string, ref: string } }>('/admin/v1/customers/:urn/decisions/:ref', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.decisions],
      summary: 'The decision of a customer and reference, as a journal entry',
      answers: { 200: decisionAnswer },
      errors: ['DECISION_NOT_FOUND'],
      params: { type: 'object', properties: { urn: urnParam, ref: refParam } }
    }
  }, async (request) => {
    const rec = await store.getDecision(request.params.urn, request.params.ref)
    if (rec === null) throw new StoreRejection('DECISION_NOT_FOUND', `no decision ${request.params.ref} for ${request.params.urn}`)
    return decisionEntryOf(rec)
  })

  app.post<{ Params: { urn: string, ref: string }, Body: { amount?: string | number } | null }>('/admin/v1/customers/:urn/decisions/:ref/reversal', {
    config: { scope: 'money:write' },
    schema: {
      tags: [TAGS.decisions],
      summary: 'Release an approved hold, whole or in part; idempotent',
      answers: { 200: reversalAnswer },
      errors: ['DECISION_NOT_FOUND', 'NOT_APPROVED', 'EXCEEDS_HOLD', 'ALREADY_REVERSED'],
      params: { type: 'object', properties: { urn: urnParam, ref: refParam } },
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { amount: { ...amountSchema, description: 'the amount released, in minor units: a digit string or an integer; default: all that is still held' } },
        examples: [{ amount: '1250' }]
      }
    }
  }, async (request) => {
    const amount = request.body?.amount === undefined ? null : amountOf(request.body.amount)
    const r = await store.reverse(request.params.urn, request.params.ref, amount, auditContext(request, amount === null ? {} : { amount: String(amount) }))
    return { urn: request.params.urn, reference: request.params.ref, released: String(r.released), available: String(r.available), replayed: r.replayed }
  })

  app.get('/admin/v1/rules', {
    config: { scope: 'read' },
    schema: { tags: [TAGS.rules], summary: 'The running rule set', answers: { 200: rulesAnswer } }
  }, async () => {
    const set = opts.rules.current()
    const at = opts.rules.loadedAt()
    return { version: set.version, loadedAt: at === null ? null : new Date(at).toISOString(), rules: set.rules }
  })

  app.post('/admin/v1/rules/reload', {
    config: { scope: 'rules:reload' },
    schema: { tags: [TAGS.rules], summary: 'Reload the rule set from RULES_DIR', answers: { 200: rulesAnswer, 422: rulesRefused }, body: noBody }
  }, async (request, reply) => {
    const was = opts.rules.current().version
    const r = await opts.rules.reload()
    // not one store script: audited right after the reload (docs/operations/admin-access.md)
    await auditAfterChange(store, request, r.ok
      ? { outcome: 'done', before: { version: was }, after: { version: r.version, rules: r.rules } }
      : { outcome: 'RULES_INVALID', before: { version: was }, after: { version: opts.rules.current().version } })
    if (!r.ok) {
      reply.code(API_ERRORS.RULES_INVALID)
      return { ...errorBody('RULES_INVALID', 'rule set refused; the running set stays'), errors: r.errors, version: opts.rules.current().version }
    }
    return { version: r.version, rules: r.rules }
  })
}
