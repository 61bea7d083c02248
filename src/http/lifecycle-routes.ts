// The card-lifecycle API on the admin listener (README "Card lifecycle API"). Business outcomes (including an upstream's
// decline) answer 200 with a status word; FAILED always answers 502: `retryable: true` when the upstream
// could not be heard (repeat the call; a transfer's or unload's amount stays held until the repeat settles
// it), `retryable: false` with `reconcile` when a person must check the outcome on the platform.
import type { FastifyInstance } from 'fastify'
import type { LoadService } from '../moves/loads.js'
import type { TransferService } from '../moves/transfers.js'
import type { UnloadService } from '../moves/unloads.js'
import type { PreAuthService } from '../moves/preauths.js'
import { isAdapterBadRequest, type RiskAdapter, type RiskAnalyseInput } from '../adapters/index.js'
import type { LifecycleAnswer } from '../moves/answer.js'
import { LifecycleNotFound } from '../moves/errors.js'
import { apiError } from '../errors.js'
import { amountOf, amountSchema } from './amount.js'
import { strictValidatorCompiler } from '../strict-ajv.js'
import { TAGS } from './openapi.js'
import { lifecycleAnswers, lifecycleRecord } from './answer-docs.js'

export interface LifecycleOptions {
  loads?: LoadService
  transfers?: TransferService
  unloads?: UnloadService
  preauths?: PreAuthService
  risk?: RiskAdapter
  defaultCurrency: string
}

// no ':' — the store's lifecycle keys and locks are built from the reference with ':' separators
const ref = { type: 'string', minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9._-]+$' }
const urn = { type: 'string', minLength: 1, maxLength: 20 }
const optText = (max: number) => ({ type: 'string', maxLength: max })

function notConfigured (party: string): never {
  throw new LifecycleNotFound('NOT_CONFIGURED', `the ${party} adapter is not configured`)
}

export async function lifecycleRoutes (app: FastifyInstance, opts: LifecycleOptions): Promise<void> {
  function status (reply: { code: (n: number) => unknown }, a: LifecycleAnswer): void {
    reply.code(a.status === 'FAILED' ? 502 : 200)
  }

  app.post<{ Body: Record<string, string | number> }>('/v1/loads', {
    config: { scope: 'lifecycle', auditAfter: ['urn', 'merchantReferenceNo', 'amount'] },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Start a card load: the gateway sends the cardholder an OTP',
      answers: lifecycleAnswers,
      errors: ['CUSTOMER_NOT_FOUND', 'WRONG_STATE', 'REFERENCE_CONFLICT', 'IN_PROGRESS', 'NOT_CONFIGURED'],
      body: {
        type: 'object',
        required: ['urn', 'amount', 'merchantReferenceNo', 'pan', 'expDate', 'cvd2', 'nameOnCard', 'mobileNumber'],
        additionalProperties: false,
        properties: {
          urn,
          amount: amountSchema,
          merchantReferenceNo: ref,
          pan: { type: 'string', pattern: '^[0-9]{12,19}$' },
          expDate: { type: 'string', pattern: '^(0[1-9]|1[0-2])[0-9]{4}$' },
          cvd2: { type: 'string', pattern: '^[0-9]{3,4}$' },
          nameOnCard: { type: 'string', minLength: 1, maxLength: 100 },
          mobileNumber: { type: 'string', pattern: '^[0-9+]{6,16}$' },
          email: optText(254),
          currencyCode: { type: 'string', pattern: '^[0-9]{3}$' },
          orderDesc: optText(50),
          cardHolderStatus: optText(20),
          customerIpAddress: optText(45),
          browserUserAgent: optText(512),
          httpAccept: optText(256),
          purposeOfAuthentication: optText(50)
        }
      }
    }
  }, async (request, reply) => {
    const loads = opts.loads ?? notConfigured('gateway')
    const b = request.body as Record<string, string>
    const { amount, urn: u, currencyCode, ...rest } = b
    const a = await loads.start({ ...rest, merchantReferenceNo: b.merchantReferenceNo as string, pan: b.pan as string, expDate: b.expDate as string, cvd2: b.cvd2 as string, urn: u as string, amount: amountOf(amount as string), currencyCode: currencyCode ?? opts.defaultCurrency })
    status(reply, a)
    return a
  })

  app.get<{ Params: { ref: string } }>('/v1/loads/:ref', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'A load as it stands',
      answers: { 200: lifecycleRecord },
      errors: ['LOAD_NOT_FOUND', 'NOT_CONFIGURED'],
      params: { type: 'object', properties: { ref } }
    }
  }, async (request) => await (opts.loads ?? notConfigured('gateway')).get(request.params.ref))

  app.post<{ Params: { ref: string }, Body: { mobileNumber?: string, email?: string } | null }>('/v1/loads/:ref/otp/resend', {
    config: { scope: 'lifecycle', auditAfter: [] },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Send the OTP of a load again',
      answers: lifecycleAnswers,
      errors: ['LOAD_NOT_FOUND', 'WRONG_STATE', 'IN_PROGRESS', 'NOT_CONFIGURED'],
      
      params: { type: 'object', properties: { ref } },
      body: { type: ['object', 'null'], additionalProperties: false, properties: { mobileNumber: { type: 'string', pattern: '^[0-9+]{6,16}$' }, email: optText(254) } }
    }
  }, async (request, reply) => {
    const a = await (opts.loads ?? notConfigured('gateway')).resend(request.params.ref, request.body ?? {})
    status(reply, a)
    return a
  })

  app.post<{ Params: { ref: string }, Body: { otp: string } }>('/v1/loads/:ref/otp', {
    config: { scope: 'lifecycle', auditAfter: [] },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Verify the OTP; on success the load is authorized and the amount credited, once',
      answers: lifecycleAnswers,
      errors: ['LOAD_NOT_FOUND', 'WRONG_STATE', 'IN_PROGRESS', 'CUSTOMER_NOT_FOUND', 'NOT_CONFIGURED'],
      
      params: { type: 'object', properties: { ref } },
      body: { type: 'object', required: ['otp'], additionalProperties: false, properties: { otp: { type: 'string', pattern: '^[0-9]{4,8}$' } } }
    }
  }, async (request, reply) => {
    const a = await (opts.loads ?? notConfigured('gateway')).verify(request.params.ref, request.body.otp)
    status(reply, a)
    return a
  })

  for (const action of ['capture', 'cancel'] as const) {
    app.post<{ Params: { pgTransactionId: string }, Body: { merchantReferenceNo: string, amount?: string | number } }>(`/v1/preauths/:pgTransactionId/${action}`, {
      config: { scope: 'lifecycle', auditAfter: ['merchantReferenceNo', 'amount'] },
      schema: {
        tags: [TAGS.lifecycle],
        summary: action === 'capture' ? 'Complete a gateway pre-authorization' : 'Cancel a gateway pre-authorization',
        answers: lifecycleAnswers,
        errors: ['REFERENCE_CONFLICT', 'IN_PROGRESS', 'NOT_CONFIGURED'],
        params: { type: 'object', properties: { pgTransactionId: { type: 'string', pattern: '^[0-9]{1,8}$' } } },
        body: { type: 'object', required: ['merchantReferenceNo'], additionalProperties: false, properties: { merchantReferenceNo: ref, amount: amountSchema } }
      }
    }, async (request, reply) => {
      const a = await (opts.preauths ?? notConfigured('gateway')).run(action, request.params.pgTransactionId, request.body.merchantReferenceNo,
        request.body.amount === undefined ? null : amountOf(request.body.amount))
      status(reply, a)
      return a
    })
  }

  app.post<{ Body: { clientTxnId: string, fromUrn: string, toUrn: string, fromAccountNumber: string, toAccountNumber: string, amount: string | number } }>('/v1/transfers', {
    config: { scope: 'lifecycle', auditAfter: ['clientTxnId', 'fromUrn', 'toUrn', 'amount'] },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Move funds between two customers\' wallets on the prepaid platform, once',
      answers: lifecycleAnswers,
      errors: ['SAME_CUSTOMER', 'CUSTOMER_NOT_FOUND', 'WRONG_STATE', 'REFERENCE_CONFLICT', 'IN_PROGRESS', 'NOT_CONFIGURED'],
      body: {
        type: 'object',
        required: ['clientTxnId', 'fromUrn', 'toUrn', 'fromAccountNumber', 'toAccountNumber', 'amount'],
        additionalProperties: false,
        properties: {
          clientTxnId: ref, fromUrn: urn, toUrn: urn, amount: amountSchema,
          fromAccountNumber: { type: 'string', minLength: 1, maxLength: 34 },
          toAccountNumber: { type: 'string', minLength: 1, maxLength: 34 }
        }
      }
    }
  }, async (request, reply) => {
    const b = request.body
    if (b.fromUrn === b.toUrn) throw apiError('SAME_CUSTOMER', 'transfers between sub-wallets of one customer are not supported')
    const a = await (opts.transfers ?? notConfigured('prepaid')).transfer({ ...b, amount: amountOf(b.amount) })
    status(reply, a)
    return a
  })

  app.get<{ Params: { id: string } }>('/v1/transfers/:id', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'A transfer as it stands',
      answers: { 200: lifecycleRecord },
      errors: ['TRANSFER_NOT_FOUND', 'NOT_CONFIGURED'],
      params: { type: 'object', properties: { id: ref } }
    }
  }, async (request) => await (opts.transfers ?? notConfigured('prepaid')).get(request.params.id))

  app.post<{ Body: Record<string, unknown> & { amount: string | number, fee: string | number } }>('/v1/unloads', {
    config: { scope: 'lifecycle', auditAfter: ['clientTxnId', 'urn', 'amount', 'fee'] },
    // the spec's integers are integers: the listener's validator would turn "1" into 1
    validatorCompiler: strictValidatorCompiler,
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Unload funds from a wallet to a bank account: amount + fee held first, final on the platform\'s 00',
      answers: lifecycleAnswers,
      errors: ['CUSTOMER_NOT_FOUND', 'WRONG_STATE', 'REFERENCE_CONFLICT', 'IN_PROGRESS', 'NOT_CONFIGURED'],
      body: {
        type: 'object',
        required: ['clientTxnId', 'urn', 'accountNumber', 'amount', 'fee', 'receiver', 'sourceType', 'fundFlowType', 'implId', 'implType', 'beneficiaryId'],
        additionalProperties: false,
        properties: {
          clientTxnId: ref,
          urn,
          accountNumber: { type: 'string', minLength: 1, maxLength: 50 },
          amount: amountSchema,
          fee: { anyOf: [{ type: 'string', pattern: '^[0-9]{1,15}$' }, { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }] },
          receiver: { type: 'string', minLength: 1, maxLength: 100 },
          sourceType: { type: 'integer', enum: [0, 1] },
          fundFlowType: { type: 'string', minLength: 1, maxLength: 50 },
          implId: { type: 'string', minLength: 1, maxLength: 50 },
          implType: { type: 'string', minLength: 1, maxLength: 50 },
          beneficiaryId: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          customerId: { type: 'string', minLength: 1, maxLength: 50 },
          customerMobile: { type: 'string', pattern: '^\\+?[1-9][0-9]{7,14}$' },
          reservedField1: { type: 'object' },
          extra: { type: 'object' }
        }
      }
    }
  }, async (request, reply) => {
    const unloads = opts.unloads ?? notConfigured('prepaid unload (PREPAID_UNLOAD_PATH)')
    const b = request.body
    const fee = Number(b.fee)
    if (!Number.isSafeInteger(fee)) throw apiError('VALIDATION', 'fee must be a whole number of minor units')
    const a = await unloads.unload({ ...(b as unknown as Parameters<UnloadService['unload']>[0]), amount: amountOf(b.amount), fee })
    status(reply, a)
    return a
  })

  app.get<{ Params: { id: string } }>('/v1/unloads/:id', {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'An unload as it stands',
      answers: { 200: lifecycleRecord },
      errors: ['UNLOAD_NOT_FOUND', 'NOT_CONFIGURED'],
      params: { type: 'object', properties: { id: ref } }
    }
  }, async (request) => await (opts.unloads ?? notConfigured('prepaid unload (PREPAID_UNLOAD_PATH)')).get(request.params.id))

  app.post<{ Body: RiskAnalyseInput & { purchaseAmount: number | string } }>('/v1/risk/analyse', {
    config: { scope: 'lifecycle' },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Ask the risk service for an assessment (nothing stored)',
      answers: lifecycleAnswers,
      errors: ['NOT_CONFIGURED'],
      body: {
        type: 'object',
        required: ['clientTxnRefId', 'acctNumber', 'purchaseAmount', 'txnSourceType'],
        properties: { purchaseAmount: amountSchema, clientTxnRefId: { type: 'string' }, acctNumber: { type: 'string' }, txnSourceType: { type: 'string' } }
      }
    }
  }, async (request, reply) => {
    const risk = opts.risk ?? notConfigured('risk')
    try {
      const res = await risk.analyse({ ...request.body, purchaseAmount: amountOf(request.body.purchaseAmount) })
      if (res.kind === 'failed') {
        reply.code(502)
        return { status: 'FAILED', upstream: null, retryable: res.retryable, failure: res.reason }
      }
      const { kind: _kind, ...assessment } = res
      return { status: 'ASSESSED', upstream: { code: '00', description: assessment.ruleSuggestion }, assessment }
    } catch (err) {
      if (isAdapterBadRequest(err)) throw apiError('VALIDATION', `risk request refused before sending: ${err.problems.join('; ')}`)
      throw err
    }
  })
}

/** Maps lifecycle errors to the admin listener's {error, message}; returns null for other errors. */
/** An adapter's refusal before sending is the caller's bad input. */
export function asApiError (err: unknown): unknown {
  return isAdapterBadRequest(err) ? apiError('VALIDATION', `refused before sending: ${err.problems.join('; ')}`) : err
}
