// The stand-in policy (STANDIN_POLICY_FILE, docs/operations/standin.md): what an instance may approve while the
// store is unreachable. Read once at start-up and checked whole, like the rules: a bad file stops the start
// with the file and the entry named, since running with other caps than the operator wrote would approve
// what the program means to decline.
import { readFileSync } from 'node:fs'
import { Ajv, type ErrorObject } from 'ajv'
import { CHANNELS, type Channel } from '../domain/channels.js'

/** a digit string of at most 15 digits: an amount in minor units that every store keeps exactly */
const amount = { type: 'string', pattern: '^(0|[1-9][0-9]{0,14})$' } as const
const count = { type: 'integer', minimum: 0, maximum: 1_000_000_000 } as const

export const STANDIN_POLICY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['channels', 'perCard', 'perInstance'],
  properties: {
    $schema: { type: 'string' },
    channels: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(CHANNELS.map((c) => [c, {
        type: 'object',
        additionalProperties: false,
        required: ['enabled'],
        properties: { enabled: { type: 'boolean' }, perTransactionMax: amount }
      }]))
    },
    perCard: {
      type: 'object',
      additionalProperties: false,
      required: ['count', 'amount'],
      properties: { count, amount }
    },
    perInstance: {
      type: 'object',
      additionalProperties: false,
      required: ['amount'],
      properties: { count, amount }
    },
    blockedMcc: { type: 'array', maxItems: 10_000, uniqueItems: true, items: { type: 'string', pattern: '^[0-9]{4}$' } }
  }
} as const

export interface ChannelPolicy {
  enabled: boolean
  /** minor units; null: no cap of its own (the card's and the instance's caps still hold) */
  perTransactionMax: number | null
}

export interface StandInPolicy {
  /** a channel left out is not approved in stand-in */
  channels: Partial<Record<Channel, ChannelPolicy>>
  perCard: { count: number, amount: number }
  perInstance: { count: number | null, amount: number }
  blockedMcc: ReadonlySet<string>
}

/** Why a stand-in request is declined before any cap is counted, or null when the policy lets it through. */
export type PolicyRefusal = 'channel' | 'perTransactionMax' | 'mcc'

export class StandInPolicyError extends Error {
  constructor (readonly file: string, readonly entry: string, reason: string) {
    super(`${file}: ${entry === '' ? '' : `${entry}: `}${reason}`)
    this.name = 'StandInPolicyError'
  }
}

const ajv = new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false })
const validate = ajv.compile(STANDIN_POLICY_SCHEMA)

interface RawPolicy {
  channels: Partial<Record<Channel, { enabled: boolean, perTransactionMax?: string }>>
  perCard: { count: number, amount: string }
  perInstance: { count?: number, amount: string }
  blockedMcc?: string[]
}

function describe (e: ErrorObject): { entry: string, reason: string } {
  const entry = e.instancePath.replace(/^\//, '').replace(/\//g, '.')
  if (e.keyword === 'additionalProperties') return { entry, reason: `unknown field "${String(e.params.additionalProperty)}"` }
  if (e.keyword === 'pattern' && e.instancePath.startsWith('/blockedMcc')) return { entry, reason: 'must be a four-digit MCC' }
  if (e.keyword === 'pattern') return { entry, reason: 'must be an amount in minor units as a digit string ("200000")' }
  return { entry, reason: e.message ?? 'is not valid' }
}

/** The policy of a parsed JSON document; throws a StandInPolicyError naming the entry. */
export function parsePolicy (doc: unknown, file = 'STANDIN_POLICY_FILE'): StandInPolicy {
  if (!validate(doc)) {
    const { entry, reason } = describe((validate.errors ?? [])[0] as ErrorObject)
    throw new StandInPolicyError(file, entry, reason)
  }
  const raw = doc as unknown as RawPolicy
  const channels: Partial<Record<Channel, ChannelPolicy>> = {}
  for (const c of CHANNELS) {
    const p = raw.channels[c]
    if (p !== undefined) channels[c] = { enabled: p.enabled, perTransactionMax: p.perTransactionMax === undefined ? null : Number(p.perTransactionMax) }
  }
  return {
    channels,
    perCard: { count: raw.perCard.count, amount: Number(raw.perCard.amount) },
    perInstance: { count: raw.perInstance.count ?? null, amount: Number(raw.perInstance.amount) },
    blockedMcc: new Set(raw.blockedMcc ?? [])
  }
}

/** The policy in the file. Throws a StandInPolicyError. */
export function loadPolicy (file: string): StandInPolicy {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new StandInPolicyError(file, '', `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new StandInPolicyError(file, '', `is not JSON (${(err as Error).message})`)
  }
  return parsePolicy(doc, file)
}

/** The policy's own checks of one transaction (before the caps): channel, MCC, per-transaction amount. */
export function refusalOf (policy: StandInPolicy, channel: string, mcc: string, debit: number): PolicyRefusal | null {
  const c = policy.channels[channel as Channel]
  if (c === undefined || !c.enabled) return 'channel'
  if (policy.blockedMcc.has(mcc)) return 'mcc'
  if (c.perTransactionMax !== null && debit > c.perTransactionMax) return 'perTransactionMax'
  return null
}

/**
 * The most this policy lets one instance approve in one outage, in minor units: the instance cap, or what
 * `cards` distinct cards can take if that is less (docs/operations/standin.md, Exposure).
 */
export function instanceExposure (policy: StandInPolicy, cards: number): number {
  const perTxMax = Math.max(0, ...Object.values(policy.channels).map((c) => (c.enabled ? (c.perTransactionMax ?? Number.POSITIVE_INFINITY) : 0)))
  const perCard = Math.min(policy.perCard.amount, policy.perCard.count * perTxMax)
  let cap = Math.min(policy.perInstance.amount, cards * perCard)
  if (policy.perInstance.count !== null) cap = Math.min(cap, policy.perInstance.count * perTxMax)
  return cap
}
