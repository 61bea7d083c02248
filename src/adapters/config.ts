// Adapter options from the environment (README "Configuration"). A party is configured when its URL is set; then
// its other variables are required and checked here, once, with the variable named in the error.
// Variables beyond the contract (timeouts, paths, the cancellation action) are optional refinements.
import { AdapterConfigError } from './transport/errors.js'
import { GATEWAY_HTTP_DEFAULTS } from './gateway/adapter.js'
import type { GatewayOptions } from './gateway/adapter.js'
import { PREPAID_HTTP_DEFAULTS } from './prepaid/adapter.js'
import type { PrepaidOptions } from './prepaid/adapter.js'
import { RISK_DEFAULT_TIMEOUT_MS } from './risk/adapter.js'
import type { RiskOptions } from './risk/adapter.js'

export interface AdapterOptionsFromEnv {
  gateway?: GatewayOptions
  risk?: RiskOptions
  prepaid?: PrepaidOptions
  /** LIFECYCLE_LOCK_TTL_MS: how long a card-lifecycle lock outlives a holder that never releases it */
  lifecycleLockTtlMs: number
}

export const LIFECYCLE_LOCK_TTL_MS_DEFAULT = 60_000
/** what a lifecycle call spends on the store besides its upstream calls, at most */
export const LIFECYCLE_STORE_MARGIN_MS = 5000

type Env = NodeJS.ProcessEnv

function value (env: Env, name: string): string | undefined {
  const v = env[name]?.trim()
  return v === undefined || v === '' ? undefined : v
}

function required (env: Env, name: string, because: string, pattern?: RegExp, rule?: string): string {
  const v = value(env, name)
  if (v === undefined) throw new AdapterConfigError(`${name} is required when ${because} is set`)
  if (pattern !== undefined && !pattern.test(v)) throw new AdapterConfigError(`${name} ${rule ?? 'is malformed'}`)
  return v
}

function optional (env: Env, name: string, pattern: RegExp, rule: string): string | undefined {
  const v = value(env, name)
  if (v !== undefined && !pattern.test(v)) throw new AdapterConfigError(`${name} ${rule}`)
  return v
}

function url (env: Env, name: string): string | undefined {
  const v = value(env, name)
  if (v === undefined) return undefined
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new AdapterConfigError(`${name} is not a URL`)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AdapterConfigError(`${name} must be an http or https URL`)
  if (u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '') {
    throw new AdapterConfigError(`${name} must have no query, fragment or credentials`)
  }
  return v
}

function ms (env: Env, name: string, max = 600_000): number | undefined {
  const v = value(env, name)
  if (v === undefined) return undefined
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) throw new AdapterConfigError(`${name} must be a whole number of milliseconds from 1 to ${max}`)
  return Number(v)
}

function timeouts (env: Env, prefix: string): Pick<GatewayOptions, 'connectTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs' | 'totalTimeoutMs'> {
  const out: Pick<GatewayOptions, 'connectTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs' | 'totalTimeoutMs'> = {}
  const set = (key: keyof typeof out, name: string): void => {
    const v = ms(env, `${prefix}_${name}`)
    if (v !== undefined) out[key] = v
  }
  set('connectTimeoutMs', 'CONNECT_TIMEOUT_MS')
  set('headersTimeoutMs', 'HEADERS_TIMEOUT_MS')
  set('bodyTimeoutMs', 'BODY_TIMEOUT_MS')
  set('totalTimeoutMs', 'TIMEOUT_MS')
  return out
}

function gatewayFrom (env: Env): GatewayOptions | undefined {
  const baseUrl = url(env, 'GATEWAY_URL')
  if (baseUrl === undefined) return undefined
  const because = 'GATEWAY_URL'
  const out: GatewayOptions = {
    baseUrl,
    apiKey: required(env, 'GATEWAY_API_KEY', because),
    pgInstanceId: required(env, 'GATEWAY_PG_INSTANCE_ID', because),
    merchantId: required(env, 'GATEWAY_MERCHANT_ID', because),
    version: required(env, 'GATEWAY_VERSION', because, /^\d+\.\d+\.\d+\.\d+$/, 'must be four dot-separated numbers, e.g. 1.0.0.1'),
    ...timeouts(env, 'GATEWAY')
  }
  const action = optional(env, 'GATEWAY_PREAUTH_CANCEL_ACTION', /^[A-Z0-9_]{1,100}$/, 'must be upper-case letters, digits and underscores')
  if (action !== undefined) out.preAuthCancellationAction = action
  const typeCode = optional(env, 'GATEWAY_PREAUTH_CANCEL_TYPE_CODE', /^\d{1,6}$/, 'must be digits')
  if (typeCode !== undefined) out.preAuthCancellationTypeCode = typeCode
  return out
}

function riskFrom (env: Env): RiskOptions | undefined {
  const baseUrl = url(env, 'RISK_URL')
  if (baseUrl === undefined) return undefined
  const because = 'RISK_URL'
  const out: RiskOptions = {
    baseUrl,
    accessToken: required(env, 'RISK_ACCESS_TOKEN', because),
    instanceId: required(env, 'RISK_INSTANCE_ID', because, /^\d{4}$/, 'must be 4 digits'),
    channelId: required(env, 'RISK_CHANNEL_ID', because, /^[A-Za-z0-9]{1,64}$/, 'must be alphanumeric')
  }
  // on the 2000 ms External Authorization path: a longer risk wait could never be used
  out.timeoutMs = ms(env, 'RISK_TIMEOUT_MS', 1999) ?? RISK_DEFAULT_TIMEOUT_MS
  const connect = ms(env, 'RISK_CONNECT_TIMEOUT_MS', 1999)
  if (connect !== undefined) out.connectTimeoutMs = connect
  return out
}

function prepaidFrom (env: Env): PrepaidOptions | undefined {
  const baseUrl = url(env, 'PREPAID_URL')
  if (baseUrl === undefined) return undefined
  const because = 'PREPAID_URL'
  const out: PrepaidOptions = {
    baseUrl,
    apiKey: required(env, 'PREPAID_API_KEY', because),
    consumerKey: required(env, 'PREPAID_CONSUMER_KEY', because),
    secureCode: required(env, 'PREPAID_SECURE_CODE', because),
    clientId: required(env, 'PREPAID_CLIENT_ID', because),
    bankId: required(env, 'PREPAID_BANK_ID', because, /^\d{1,10}$/, 'must be digits'),
    ...timeouts(env, 'PREPAID')
  }
  const entityId = optional(env, 'PREPAID_ENTITY_ID', /^\d{1,10}$/, 'must be digits')
  if (entityId !== undefined) out.entityId = entityId
  const transferPath = optional(env, 'PREPAID_TRANSFER_PATH', /^\/[\w./-]*$/, 'must be a path starting with /')
  if (transferPath !== undefined) out.fundTransferPath = transferPath
  const messageCode = optional(env, 'PREPAID_TRANSFER_MESSAGE_CODE', /^\d{1,6}$/, 'must be digits')
  if (messageCode !== undefined) out.transferMessageCode = messageCode
  const unloadPath = optional(env, 'PREPAID_UNLOAD_PATH', /^\/[\w./-]*$/, 'must be a path starting with /')
  if (unloadPath !== undefined) out.unloadPath = unloadPath
  return out
}

/**
 * The lock of a card-lifecycle call must outlive the upstream calls made under it, or a second call of
 * the same reference could run beside a slow first one. The longest: a load's verify (verifyOtp, then
 * authorize) and a transfer's or unload's send then read, each two calls of the party's whole limit.
 */
function lockTtl (env: Env, out: Omit<AdapterOptionsFromEnv, 'lifecycleLockTtlMs'>): number {
  const ttl = ms(env, 'LIFECYCLE_LOCK_TTL_MS', 3_600_000) ?? LIFECYCLE_LOCK_TTL_MS_DEFAULT
  const parties: Array<[string, number | undefined]> = [
    ['GATEWAY_TIMEOUT_MS', out.gateway === undefined ? undefined : out.gateway.totalTimeoutMs ?? GATEWAY_HTTP_DEFAULTS.totalTimeoutMs],
    ['PREPAID_TIMEOUT_MS', out.prepaid === undefined ? undefined : out.prepaid.totalTimeoutMs ?? PREPAID_HTTP_DEFAULTS.totalTimeoutMs]
  ]
  for (const [name, total] of parties) {
    if (total === undefined) continue
    const needed = 2 * total + LIFECYCLE_STORE_MARGIN_MS
    if (ttl < needed) {
      throw new AdapterConfigError(`LIFECYCLE_LOCK_TTL_MS (${ttl} ms) must be at least 2 × ${name} (${total} ms) + ${LIFECYCLE_STORE_MARGIN_MS} ms = ${needed} ms: raise LIFECYCLE_LOCK_TTL_MS or lower ${name}`)
    }
  }
  return ttl
}

/**
 * Options for each party whose URL is set ({} when none is). Throws an Error whose message starts with
 * the name of the variable that is missing or malformed; values are never echoed (they may be secrets).
 */
export function adapterOptionsFromEnv (env: NodeJS.ProcessEnv): AdapterOptionsFromEnv {
  const out: Omit<AdapterOptionsFromEnv, 'lifecycleLockTtlMs'> = {}
  const gateway = gatewayFrom(env)
  if (gateway !== undefined) out.gateway = gateway
  const risk = riskFrom(env)
  if (risk !== undefined) out.risk = risk
  const prepaid = prepaidFrom(env)
  if (prepaid !== undefined) out.prepaid = prepaid
  return { ...out, lifecycleLockTtlMs: lockTtl(env, out) }
}
