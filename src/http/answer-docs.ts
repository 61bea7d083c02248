// The admin listener's answers as JSON Schema, for the API document only (`answers` in a route's schema; see
// http/openapi.ts). They name the fields a client reads and leave the rest open: an answer may carry more
// (for instance the ISO 8601 sibling of every `…AtMs` instant, http/iso-times.ts).
import { CARD_STATUSES, CUSTOMER_STATUSES } from '../store/types.js'
import { CONTROL_KINDS } from '../domain/controls.js'

const digits = { type: 'string', pattern: '^[0-9]+$', description: 'minor units, as a digit string' } as const
const text = { type: 'string' } as const
const nullableText = { type: ['string', 'null'] } as const

function ok (description: string, schema: object): object {
  return { description, ...schema }
}

export const customerAnswer = ok('the customer', {
  type: 'object',
  required: ['urn', 'customerId', 'status', 'available', 'held', 'ledger', 'cards'],
  properties: {
    urn: text,
    customerId: nullableText,
    status: { type: 'string', enum: CUSTOMER_STATUSES },
    available: { type: 'string', pattern: '^-?[0-9]+$', description: 'what decisions spend, minor units; below zero only when the platform posted more than was held: docs/operations/settlement.md' },
    held: { ...digits, description: 'open authorization holds (SETTLEMENT_MODE=holds), minor units' },
    ledger: { type: 'string', pattern: '^-?[0-9]+$', description: 'posted: available + held, minor units' },
    cards: { type: 'object', description: 'last 4 digits → card status', additionalProperties: { type: 'string', enum: CARD_STATUSES } }
  }
})

export const moneyAnswer = ok('done, or (replayed) done before with the same reference', {
  type: 'object',
  required: ['urn', 'reference', 'amount', 'available', 'replayed'],
  properties: { urn: text, reference: text, amount: digits, available: digits, replayed: { type: 'boolean' } }
})

export const reversalAnswer = ok('released, or (replayed) released before', {
  type: 'object',
  required: ['urn', 'reference', 'released', 'available', 'replayed'],
  properties: { urn: text, reference: text, released: digits, available: digits, replayed: { type: 'boolean' } }
})

const count = { type: 'integer', minimum: 0, description: 'minor units' } as const
const countOrNull = { type: ['integer', 'null'], minimum: 0, description: 'minor units; null: no limit or not known' } as const
const instant = { type: 'string', format: 'date-time' } as const

/** A decision as every admin answer gives it (src/store/decision-entry.ts, docs/api/admin.md#finding-a-decision). */
export const decisionEntry = {
  type: 'object',
  required: ['v', 'urn', 'reference', 'last4', 'request', 'arrivedAt', 'decidedAt', 'code', 'reason', 'ruleId', 'control', 'limit', 'availableSeen',
    'debit', 'shadowHits', 'rulesVersion', 'controls', 'customerStatus', 'cardStatus', 'answeredOnDeadline'],
  properties: {
    v: { const: 1 },
    urn: text,
    reference: text,
    last4: text,
    request: { type: 'object', additionalProperties: text, description: 'the request\'s fields as received' },
    arrivedAt: instant,
    decidedAt: { ...instant, type: ['string', 'null'] },
    code: { type: 'string', pattern: '^[0-9]{2}$' },
    reason: text,
    ruleId: nullableText,
    control: {
      type: ['object', 'null'],
      description: 'the card control that declined, with the values it saw',
      properties: { kind: text, check: { enum: ['enabled', 'perTransactionMax', 'dailyMax'] }, limit: countOrNull, totalBefore: countOrNull, debit: count }
    },
    limit: { type: ['object', 'null'], description: 'for a limit decline: the window\'s use before and its max', properties: { ruleId: text, usedBefore: count, max: count } },
    availableSeen: { ...countOrNull, description: 'for 51: the available balance seen' },
    debit: count,
    shadowHits: { type: 'array', items: text },
    rulesVersion: text,
    controls: {
      type: ['object', 'null'],
      description: 'the card controls that applied, as they stood',
      additionalProperties: { type: 'object', properties: { enabled: { type: 'boolean' }, perTransactionMax: countOrNull, dailyMax: countOrNull } }
    },
    customerStatus: nullableText,
    cardStatus: nullableText,
    answeredOnDeadline: { type: 'boolean' },
    decidedCode: { ...nullableText, description: 'present when the deadline guard answered 05: what the store had decided' },
    released: { ...count, description: 'present once part of the hold was given back (reversal, deadline release)' },
    standIn: { const: true, description: 'present when the decision was made in stand-in while the store was unreachable, and replayed into it: docs/operations/standin.md' }
  }
}

export const decisionAnswer = ok('the decision, as a journal entry', decisionEntry)

export const journalAnswer = ok('journal entries, newest first', {
  type: 'object',
  required: ['items'],
  properties: {
    items: { type: 'array', items: decisionEntry },
    nextCursor: { type: ['string', 'null'], description: 'pass as `cursor` for the next page; null on the last' }
  }
})

export const rulesAnswer = ok('the rule set', {
  type: 'object',
  required: ['version', 'rules'],
  properties: { version: text, loadedAt: nullableText, rules: { type: 'array', items: { type: 'object' } } }
})

export const rulesRefused = ok('RULES_INVALID: the set was refused and the running set stays', {
  type: 'object',
  required: ['error', 'message', 'errors', 'version'],
  properties: {
    error: { type: 'string', enum: ['RULES_INVALID'] },
    message: text,
    errors: { type: 'array', items: { type: 'object' }, description: 'each with its file, path, rule id and code' },
    version: { type: 'string', description: 'the version still running' }
  }
})

const controlSetting = {
  type: 'object',
  required: ['enabled'],
  properties: { enabled: { type: 'boolean' }, perTransactionMax: { type: 'integer' }, dailyMax: { type: 'integer' } }
} as const

export const controlsAnswer = ok('the card\'s effective controls: its own settings over the program\'s defaults', {
  type: 'object',
  required: [...CONTROL_KINDS],
  properties: Object.fromEntries(CONTROL_KINDS.map((k) => [k, controlSetting]))
})

export const controlsRefused = ok('VALIDATION: the body is not a set of controls; `field` names the first bad one', {
  type: 'object',
  required: ['error', 'message', 'field'],
  properties: {
    error: { type: 'string', enum: ['VALIDATION'] },
    message: text,
    field: { type: 'string', description: 'the dotted path of the bad value (`ECOM.dailyMax`), or "" for the whole body' }
  }
})

const lifecycle = {
  type: 'object',
  required: ['status', 'upstream'],
  properties: {
    status: { type: 'string', description: 'OTP_SENT, OTP_VERIFIED, AUTHORIZED, LOADED, OTP_INVALID, OTP_EXPIRED, OTP_EXHAUSTED, PENDING, TRANSFERRED, UNLOADED, CAPTURED, CANCELLED, ASSESSED, DECLINED or FAILED' },
    upstream: { type: ['object', 'null'], properties: { code: text, description: text }, description: 'the upstream\'s code and description' },
    retryable: { type: 'boolean', description: 'with FAILED: whether the same call may be repeated' },
    replayed: { type: 'boolean', description: 'the earlier outcome of this reference; nothing was called or changed' }
  }
} as const

export const lifecycleAnswers = {
  200: ok('the outcome, including an upstream\'s decline', lifecycle),
  502: ok('FAILED: the upstream could not be heard (`retryable: true`: repeat the call; `held: true`: its amount stays held ' +
    'until the repeat settles it), or (`retryable: false`, `reconcile`) the outcome must be checked on the platform', lifecycle)
}

export const lifecycleRecord = ok('the record of this reference, as it stands', { ...lifecycle, required: ['status'] })
