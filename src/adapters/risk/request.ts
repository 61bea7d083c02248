// The risk analysis request as it goes on the wire (spec B): every value a string, booleans as "true" /
// "false", the amount in minor units, the timestamp yyyyMMddHHmmss in UTC. Built from typed input and
// checked against a schema before sending, so a request the service would refuse never leaves.
import { isIP } from 'node:net'
import { badRequest } from '../transport/errors.js'
import { compileAllErrors } from '../transport/schema.js'
import { formatUtcTimestamp, isCalendarTimestamp } from '../transport/time.js'

export interface RiskAnalyseInput {
  /** unique per request, made by the caller */
  clientTxnRefId: string
  /** card or account number: the primary customer identifier */
  acctNumber: string
  /** integer, minor units */
  purchaseAmount: number
  txnSourceType: string
  /** a Date is formatted in UTC; a string must already be yyyyMMddHHmmss (UTC). Default: now */
  txnTimestamp?: Date | string
  /** default false: the caller waits for the score */
  async?: boolean
  /** default false: summary result */
  details?: boolean
  /** default false */
  partRequest?: boolean
  /** default: the adapter's channelId */
  channelId?: string
  messageType?: string
  /** ISO 3166 numeric, 3 digits */
  merchantCountryCode?: string
  ip?: string
  cardType?: string
  userAgent?: string
  mobileNumber?: string
  /** further fields configured per use case, sent as they are */
  custom?: Record<string, string>
}

export type RiskWireRequest = Record<string, string>

const STANDARD_FIELDS = new Set([
  'instanceId', 'channelId', 'async', 'details', 'txnSourceType', 'partRequest', 'lastDrop', 'acctNumber',
  'txnTimestamp', 'clientTxnRefId', 'purchaseAmount', 'messageType', 'merchantCountryCode', 'ip', 'cardType',
  'userAgent', 'mobileNumber'
])

const flag = { type: 'string', enum: ['true', 'false'] }
const alnum = { type: 'string', pattern: '^[A-Za-z0-9]{1,64}$' }

const validateWire = compileAllErrors<RiskWireRequest>({
  type: 'object',
  required: ['instanceId', 'channelId', 'async', 'details', 'txnSourceType', 'partRequest', 'lastDrop',
    'acctNumber', 'txnTimestamp', 'clientTxnRefId', 'purchaseAmount'],
  properties: {
    instanceId: { type: 'string', pattern: '^\\d{4}$' },
    channelId: alnum,
    async: flag,
    details: flag,
    partRequest: flag,
    lastDrop: { type: 'string', const: 'true' },
    txnSourceType: alnum,
    acctNumber: alnum,
    txnTimestamp: { type: 'string', pattern: '^\\d{14}$' },
    // hyphens and underscores are let through so UUID-style references work
    clientTxnRefId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    purchaseAmount: { type: 'string', pattern: '^(0|[1-9]\\d{0,14})$' },
    messageType: alnum,
    merchantCountryCode: { type: 'string', pattern: '^\\d{3}$' },
    ip: { type: 'string', minLength: 2, maxLength: 45 },
    cardType: alnum,
    userAgent: { type: 'string', minLength: 1, maxLength: 1024 },
    mobileNumber: { type: 'string', pattern: '^\\d{6,15}$' }
  },
  additionalProperties: { type: 'string', maxLength: 1024 }
})

function put (wire: RiskWireRequest, name: string, value: string | undefined): void {
  if (value !== undefined) wire[name] = value
}

/** The wire request, or the typed bad-request error naming every field that is wrong. */
export function buildRiskRequest (
  input: RiskAnalyseInput, fixed: { instanceId: string, channelId: string }, nowMs: number
): RiskWireRequest {
  const problems: string[] = []
  const amount = input.purchaseAmount
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
    problems.push('purchaseAmount must be an integer number of minor units')
  }
  let txnTimestamp: string | undefined
  const ts = input.txnTimestamp ?? new Date(nowMs)
  if (ts instanceof Date) {
    if (Number.isNaN(ts.getTime())) problems.push('txnTimestamp is not a valid date')
    else txnTimestamp = formatUtcTimestamp(ts)
  } else if (typeof ts === 'string' && isCalendarTimestamp(ts)) {
    txnTimestamp = ts
  } else {
    problems.push('txnTimestamp must be yyyyMMddHHmmss (UTC)')
  }
  if (input.ip !== undefined && isIP(input.ip) === 0) problems.push('ip must be an IPv4 or IPv6 address')
  for (const name of Object.keys(input.custom ?? {})) {
    if (STANDARD_FIELDS.has(name)) problems.push(`custom.${name} would overwrite a standard field`)
  }

  const wire: RiskWireRequest = { ...input.custom }
  wire.instanceId = fixed.instanceId
  wire.channelId = input.channelId ?? fixed.channelId
  wire.async = String(input.async ?? false)
  wire.details = String(input.details ?? false)
  wire.txnSourceType = input.txnSourceType
  wire.partRequest = String(input.partRequest ?? false)
  wire.lastDrop = 'true'
  wire.acctNumber = input.acctNumber
  if (txnTimestamp !== undefined) wire.txnTimestamp = txnTimestamp
  wire.clientTxnRefId = input.clientTxnRefId
  if (typeof amount === 'number' && Number.isSafeInteger(amount)) wire.purchaseAmount = String(amount)
  put(wire, 'messageType', input.messageType)
  put(wire, 'merchantCountryCode', input.merchantCountryCode)
  put(wire, 'ip', input.ip)
  put(wire, 'cardType', input.cardType)
  put(wire, 'userAgent', input.userAgent)
  put(wire, 'mobileNumber', input.mobileNumber)

  if (problems.length === 0 && !validateWire(wire)) {
    for (const e of validateWire.errors ?? []) {
      const field = e.instancePath.slice(1) || String((e.params as { missingProperty?: string }).missingProperty ?? '')
      problems.push(`${field} ${e.keyword === 'required' ? 'is required' : `fails ${e.keyword}`}`)
    }
  }
  if (problems.length > 0) throw badRequest(problems)
  return wire
}
