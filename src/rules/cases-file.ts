// The format of a rules test-cases file (`extauth rules test`): transactions with the customer state they
// meet and the answer an operator expects. Checked with ajv so a typo in a case is an error, not a pass.
import { Ajv } from 'ajv'
import { CARD_STATUSES, CUSTOMER_STATUSES, type CardStatus, type CustomerStatus } from '../store/types.js'
import { RESPONSE_CODES, type ResponseCode } from '../decision/request.js'

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

const validate = new Ajv({ allErrors: true, strict: true }).compile(casesFileSchema)

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
  return { ok: true, file }
}
