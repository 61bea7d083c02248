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
const optText = (max: number, description: string) => ({ type: 'string', maxLength: max, description })
const mobile = '^[0-9+]{6,16}$'

// What each field means, for the API reference (`description`), and one whole request a call takes
// (`examples`): both reach GET /admin/openapi.json and /admin/docs, where the example fills "Try it out".
const loadRef = { ...ref, description: 'your reference of the load, unique per load (letters, digits, `.`, `_`, `-`): the same reference again resumes or replays the load' }
const transferId = { ...ref, description: 'your id of the transfer, unique across transfers and unloads (letters, digits, `.`, `_`, `-`): the same id again resumes or replays it' }
const unloadId = { ...ref, description: 'your id of the unload, unique across transfers and unloads (letters, digits, `.`, `_`, `-`): the same id again resumes or replays it' }
const minorUnits = (what: string) => ({ ...amountSchema, description: `${what}, in minor units: a digit string or an integer ("50000" is 500.00)` })

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
          urn: { ...urn, description: 'the customer credited once the load is authorized (PUT /admin/v1/customers/{urn} first)' },
          amount: minorUnits('the amount to load'),
          merchantReferenceNo: loadRef,
          pan: { type: 'string', pattern: '^[0-9]{12,19}$', description: 'the number of the card charged, 12 to 19 digits; sent to the gateway, never logged or stored (the load keeps the last four digits)' },
          expDate: { type: 'string', pattern: '^(0[1-9]|1[0-2])[0-9]{4}$', description: 'the card\'s expiry date, MMYYYY: 122030 is December 2030; never logged or stored' },
          cvd2: { type: 'string', pattern: '^[0-9]{3,4}$', description: 'the card\'s security code, 3 or 4 digits; never logged or stored' },
          nameOnCard: { type: 'string', minLength: 1, maxLength: 100, description: 'the cardholder\'s name as on the card' },
          mobileNumber: { type: 'string', pattern: mobile, description: 'the mobile number the gateway sends the OTP to, with the country code (919800000001)' },
          email: optText(254, 'an email address the gateway also sends the OTP to'),
          currencyCode: { type: 'string', pattern: '^[0-9]{3}$', description: 'ISO 4217 numeric code of the amount (356 is INR); default DEFAULT_CURRENCY' },
          orderDesc: optText(50, 'what the load is for, passed to the gateway'),
          cardHolderStatus: optText(20, 'passed to the gateway as it is'),
          customerIpAddress: optText(45, 'the cardholder\'s IP address, passed to the gateway'),
          browserUserAgent: optText(512, 'the cardholder\'s browser User-Agent, passed to the gateway (browser_user_agent)'),
          httpAccept: optText(256, 'the cardholder\'s browser Accept header, passed to the gateway (http_accept)'),
          purposeOfAuthentication: optText(50, 'passed to the gateway as it is')
        },
        examples: [{
          urn: 'URN0001', amount: '50000', merchantReferenceNo: 'LOAD-1', pan: '4111111111111111', expDate: '122030', cvd2: '123',
          nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001', email: 'cardholder@example.com', currencyCode: '356'
        }]
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
      params: { type: 'object', properties: { ref: loadRef } }
    }
  }, async (request) => await (opts.loads ?? notConfigured('gateway')).get(request.params.ref))

  app.post<{ Params: { ref: string }, Body: { mobileNumber?: string, email?: string } | null }>('/v1/loads/:ref/otp/resend', {
    config: { scope: 'lifecycle', auditAfter: [] },
    schema: {
      tags: [TAGS.lifecycle],
      summary: 'Send the OTP of a load again',
      answers: lifecycleAnswers,
      errors: ['LOAD_NOT_FOUND', 'WRONG_STATE', 'IN_PROGRESS', 'NOT_CONFIGURED'],
      params: { type: 'object', properties: { ref: loadRef } },
      body: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: {
          mobileNumber: { type: 'string', pattern: mobile, description: 'another mobile number to send the OTP to, with the country code; default: the load\'s' },
          email: optText(254, 'another email address to send the OTP to; default: the load\'s')
        },
        examples: [{ mobileNumber: '919800000001' }]
      }
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
      params: { type: 'object', properties: { ref: loadRef } },
      body: {
        type: 'object',
        required: ['otp'],
        additionalProperties: false,
        properties: { otp: { type: 'string', pattern: '^[0-9]{4,8}$', description: 'the OTP the cardholder received, 4 to 8 digits; never logged or stored' } },
        examples: [{ otp: '135790' }]
      }
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
        params: { type: 'object', properties: { pgTransactionId: { type: 'string', pattern: '^[0-9]{1,8}$', description: 'the gateway\'s id of the pre-authorization (pgTransactionId of its authorize answer)' } } },
        body: {
          type: 'object',
          required: ['merchantReferenceNo'],
          additionalProperties: false,
          properties: {
            merchantReferenceNo: { ...ref, description: `your reference of the ${action === 'capture' ? 'capture' : 'cancellation'}: the same reference again replays it` },
            amount: minorUnits(action === 'capture' ? 'the amount to capture, at most the authorized one; default: all of it' : 'the amount to cancel; default: all of it')
          },
          examples: [action === 'capture' ? { merchantReferenceNo: 'CAPTURE-1', amount: '40000' } : { merchantReferenceNo: 'CANCEL-1' }]
        }
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
          clientTxnId: transferId,
          fromUrn: { ...urn, description: 'the customer the amount leaves (held here before the platform is asked)' },
          toUrn: { ...urn, description: 'the customer the amount reaches, another than fromUrn' },
          amount: minorUnits('the amount to move'),
          fromAccountNumber: { type: 'string', minLength: 1, maxLength: 34, description: 'the sender\'s wallet (sub-wallet account number) on the prepaid platform' },
          toAccountNumber: { type: 'string', minLength: 1, maxLength: 34, description: 'the receiver\'s wallet (sub-wallet account number) on the prepaid platform' }
        },
        examples: [{ clientTxnId: 'TR-1', fromUrn: 'URN0001', toUrn: 'URN0002', fromAccountNumber: '10000000001', toAccountNumber: '10000000002', amount: '10000' }]
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
      params: { type: 'object', properties: { id: transferId } }
    }
  }, async (request) => await (opts.transfers ?? notConfigured('prepaid')).get(request.params.id))

  app.post<{ Body: Record<string, unknown> & { amount: string | number, fee: string | number } }>('/v1/unloads', {
    config: { scope: 'lifecycle', auditAfter: ['clientTxnId', 'urn', 'amount', 'fee'] },
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
          clientTxnId: unloadId,
          urn: { ...urn, description: 'the customer whose wallet is unloaded: amount + fee are held here before the platform is asked' },
          accountNumber: { type: 'string', minLength: 1, maxLength: 50, description: 'the sub-wallet the money leaves, on the prepaid platform' },
          amount: minorUnits('the amount withdrawn (the platform\'s transactionAmount)'),
          fee: {
            anyOf: [{ type: 'string', pattern: '^[0-9]{1,15}$' }, { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }],
            description: 'the fee collected on top of the amount, in minor units: a digit string or an integer, 0 for none'
          },
          receiver: { type: 'string', minLength: 1, maxLength: 100, description: 'the name of the account holder, merchant or wallet holder receiving the money' },
          sourceType: { type: 'integer', enum: [0, 1], description: 'an integer: 0 a wallet, 1 an account ("1" is refused)' },
          fundFlowType: { type: 'string', minLength: 1, maxLength: 50, description: 'the fund flow type the operator agreed for unloads' },
          implId: { type: 'string', minLength: 1, maxLength: 50, description: 'the implementation id the operator agreed for this kind of unload' },
          implType: { type: 'string', minLength: 1, maxLength: 50, description: 'the implementation type the operator agreed for this kind of unload' },
          beneficiaryId: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'an integer: the beneficiary registered on the platform ("42" is refused)' },
          customerId: { type: 'string', minLength: 1, maxLength: 50, description: 'the platform\'s customer id of the wallet; default: the customerId extauth holds for urn' },
          customerMobile: { type: 'string', pattern: '^\\+?[1-9][0-9]{7,14}$', description: 'the cardholder\'s mobile number, starting with the country code' },
          reservedField1: { type: 'object', description: 'the platform\'s reservedField1, sent as it is' },
          extra: { type: 'object', description: 'the spec\'s further optional Unload fields, under the names agreed with the operator; none may replace a field above' }
        },
        examples: [{
          clientTxnId: 'UL-1', urn: 'URN0001', accountNumber: '10000000001', amount: '20000', fee: '500', receiver: 'A CARDHOLDER',
          sourceType: 1, fundFlowType: 'UNLOAD', implId: 'IMPL01', implType: 'BANK', beneficiaryId: 42, customerMobile: '919800000001'
        }]
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
      params: { type: 'object', properties: { id: unloadId } }
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
        additionalProperties: false,
        // the types; the risk adapter checks the values (and refuses before sending, naming each field)
        properties: {
          purchaseAmount: minorUnits('the amount of the purchase assessed'),
          clientTxnRefId: optText(1024, 'your id of the assessment, unique per request (alphanumeric)'),
          acctNumber: optText(1024, 'the customer\'s card or account number, as the risk service knows it'),
          txnSourceType: optText(1024, 'the kind of transaction source, as configured with the risk service (alphanumeric)'),
          txnTimestamp: optText(1024, 'when the transaction happened, UTC, yyyyMMddHHmmss; default: now'),
          channelId: optText(1024, 'the transaction channel\'s id (alphanumeric)'),
          messageType: optText(1024, 'the type of request message (alphanumeric)'),
          merchantCountryCode: optText(1024, 'the merchant\'s country, a 3-digit numeric code'),
          ip: optText(1024, 'the customer\'s IP address'),
          cardType: optText(1024, 'the card\'s type, such as credit or debit'),
          userAgent: optText(1024, 'the exact User-Agent header of the customer\'s browser'),
          mobileNumber: optText(1024, 'the customer\'s mobile number (digits)'),
          async: { type: 'boolean', description: 'ask the risk service to answer later instead of at once' },
          details: { type: 'boolean', description: 'true for the detailed result (rules triggered, scores); default false, the summary' },
          partRequest: { type: 'boolean', description: 'true when the evaluation data is sent in parts' },
          custom: { type: 'object', additionalProperties: optText(1024, 'a further field'), description: 'further fields of the use case, sent as they are' }
        },
        examples: [{ clientTxnRefId: 'RISK1', acctNumber: '10000000001', purchaseAmount: '250000', txnSourceType: 'ECOM' }]
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
