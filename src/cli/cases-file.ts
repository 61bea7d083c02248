// The format of a rules test-cases file (`extauth rules test`): transactions with the customer state they
// meet and the answer an operator expects. Checked with ajv so a typo in a case is an error, not a pass:
// each case's request, once merged over the defaults, must be one the endpoint would take, and may name no
// field the endpoint does not know (a misspelt "chanel" would otherwise leave the default channel in place).
import { Ajv, type ErrorObject } from 'ajv'
import { CARD_STATUSES, CUSTOMER_STATUSES, type CardStatus, type CustomerStatus } from '../store/types.js'
import { RESPONSE_CODES, type ResponseCode } from '../domain/request.js'
import { authRequestSchema } from '../domain/auth-request-schema.js'
import { didYouMean } from '../rules/suggest.js'

/** A complete, valid request; cases and the file's defaults change only what they test. */
export const DEFAULT_CASE_REQUEST: Readonly<Record<string, string>> = Object.freeze({
  urn: 'CASE-URN-0001',
  customerId: 'CASE-CUSTOMER',
  merchantName: 'TEST MERCHANT',
  terminalId: 'TERM0001',
  mcc: '5411',
  systemTraceAuditNumber: '000001',
  cardNetwork: 'RUPAY',
  channel: 'POS',
  merchantId: 'MERCHANT0001',
  transactionAmount: '1000',
  currencyCode: '356',
  last4Digits: '1234'
})

export interface CaseCustomer {
  status?: CustomerStatus
  /** available balance, integer minor units */
  balance?: number
  /** last4 -> status */
  cards?: Record<string, CardStatus>
}

export interface PriorTransaction {
  /** fields over the case's request (a fresh transactionReferenceNumber is generated) */
  request?: Record<string, string>
  /** how long before the case's transaction: Nm, Nh or Nd; default 1m */
  ago?: string
  /** how many such transactions; default 1 */
  count?: number
}

export interface TestCase {
  name: string
  /** fields over the file's default request */
  request?: Record<string, string>
  /** the customer's state; null: the urn is unknown */
  customer?: CaseCustomer | null
  prior?: PriorTransaction[]
  /** ISO-8601 instant of the transaction; default the file's `now` */
  now?: string
  expect: ResponseCode
  /** the rule expected to decide (for rule and limit declines) */
  expectRuleId?: string
}

export interface CasesFile {
  description?: string
  now?: string
  defaults?: { request?: Record<string, string>, customer?: CaseCustomer }
  cases: TestCase[]
}

const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const
const customer = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: [...CUSTOMER_STATUSES] },
    balance: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    cards: { type: 'object', additionalProperties: { enum: [...CARD_STATUSES] } }
  }
} as const
const instant = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T' } as const

export const casesFileSchema = {
  type: 'object',
  required: ['cases'],
  additionalProperties: false,
  properties: {
    description: { type: 'string' },
    now: instant,
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: { request: stringMap, customer }
    },
    cases: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'expect'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          request: stringMap,
          customer: { anyOf: [customer, { type: 'null' }] },
          prior: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              properties: {
                request: stringMap,
                ago: { type: 'string', pattern: '^[1-9][0-9]*[mhd]$' },
                count: { type: 'integer', minimum: 1, maximum: 1000 }
              }
            }
          },
          now: instant,
          expect: { enum: Object.keys(RESPONSE_CODES) },
          expectRuleId: { type: 'string' }
        }
      }
    }
  }
} as const

const ajv = new Ajv({ allErrors: true, strict: true, verbose: true })
const validate = ajv.compile(casesFileSchema)
// The endpoint ignores fields it does not know; a case must not, or a typo tests the default instead.
const validateRequest = ajv.compile({ ...authRequestSchema, additionalProperties: false })
const REQUEST_FIELDS = Object.keys(authRequestSchema.properties)

function requestError (e: ErrorObject): string {
  const field = e.instancePath.replace(/^\//, '')
  if (e.keyword === 'additionalProperties') {
    const name = String((e.params as { additionalProperty?: unknown }).additionalProperty)
    return `unknown field "${name}" (${didYouMean(name, REQUEST_FIELDS, 'fields')})`
  }
  if (e.keyword === 'required') return `"${String((e.params as { missingProperty?: unknown }).missingProperty)}" is required`
  if (e.keyword === 'enum') {
    const allowed = ((e.params as { allowedValues?: unknown[] }).allowedValues ?? []).map(String)
    return `${field} ${JSON.stringify(e.data)} is not one the endpoint accepts (${didYouMean(String(e.data), allowed)})`
  }
  return `${field} ${JSON.stringify(e.data)} ${e.message ?? e.keyword}`
}

/** Why the requests a case sends (its own and its prior transactions') would not be taken by the endpoint. */
function caseRequestErrors (file: CasesFile): string[] {
  const out = new Set<string>()
  file.cases.forEach((c, i) => {
    const base = { ...DEFAULT_CASE_REQUEST, ...file.defaults?.request, ...c.request }
    const requests: Array<[string, Record<string, string>]> = [
      [`/cases/${i}/request`, { transactionReferenceNumber: `case-${i}`, ...base }],
      ...(c.prior ?? []).map((p, k): [string, Record<string, string>] => [`/cases/${i}/prior/${k}/request`, { ...base, ...p.request, transactionReferenceNumber: `case-${i}-prior-${k}` }])
    ]
    for (const [at, req] of requests) {
      if (validateRequest(req)) continue
      for (const e of validateRequest.errors ?? []) out.add(`${at} (${JSON.stringify(c.name)}): ${requestError(e)}`)
    }
  })
  return [...out]
}

/** The parsed cases file, or the reasons it is not one. */
export function parseCasesFile (text: string): { ok: true, file: CasesFile } | { ok: false, errors: string[] } {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    return { ok: false, errors: [`not valid JSON: ${(err as Error).message}`] }
  }
  if (!validate(doc)) {
    return { ok: false, errors: (validate.errors ?? []).map(e => `${e.instancePath === '' ? '(file)' : e.instancePath} ${e.message ?? e.keyword}`) }
  }
  const file = doc as unknown as CasesFile
  const bad = [file.now, ...file.cases.map(c => c.now)].filter(n => n !== undefined && Number.isNaN(Date.parse(n)))
  if (bad.length > 0) return { ok: false, errors: bad.map(n => `not a valid instant: ${String(n)}`) }
  const requestErrors = caseRequestErrors(file)
  if (requestErrors.length > 0) return { ok: false, errors: requestErrors }
  return { ok: true, file }
}
