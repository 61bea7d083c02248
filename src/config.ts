// Configuration from the environment (README "Configuration"), validated once at start-up. A bad value stops the
// process with one line naming the variable; secrets never appear in that line.
import { cleanEnv, str, port, bool, makeValidator, type ReporterOptions } from 'envalid'
import ipaddr from 'ipaddr.js'
import { assertTimeZone } from './time.js'
import { adapterOptionsFromEnv, type AdapterOptionsFromEnv } from './adapters/config.js'

/** The platform declines as timed out at 2000 ms; our own deadline must sit inside it. */
export const PLATFORM_TIMEOUT_MS = 2000

export class ConfigError extends Error {
  readonly variable: string
  constructor (variable: string, message: string) {
    super(`${variable}: ${message}`)
    this.name = 'ConfigError'
    this.variable = variable
  }
}

const intRange = (lo: number, hi: number) => makeValidator<number>((input: string) => {
  if (!/^\d+$/.test(input.trim())) throw new Error(`must be a whole number from ${lo} to ${hi}`)
  const n = Number(input.trim())
  if (n < lo || n > hi) throw new Error(`must be a whole number from ${lo} to ${hi}`)
  return n
})

const list = makeValidator<string[]>((input: string) =>
  input.split(',').map((s) => s.trim()).filter((s) => s !== ''))

export type CidrList = Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>

const cidrs = makeValidator<CidrList>((input: string) => {
  const out: CidrList = []
  for (const raw of input.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    try {
      // ipaddr.js also reads inet_aton forms ("10.1.5" = 10.1.0.5, "010.1.2.3" = 8.1.2.3): IPv4 must be a.b.c.d
      if (!raw.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(raw.split('/')[0] as string)) throw new Error('not a.b.c.d')
      out.push(raw.includes('/') ? ipaddr.parseCIDR(raw) : singleHost(ipaddr.parse(raw)))
    } catch {
      throw new Error(`"${raw}" is not an IP address or CIDR`)
    }
  }
  return out
})

function singleHost (addr: ipaddr.IPv4 | ipaddr.IPv6): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  return [addr, addr.kind() === 'ipv4' ? 32 : 128]
}

const trustProxy = makeValidator<boolean | string>((input: string) => {
  const v = input.trim()
  if (v === '' || v === 'false') return false
  if (v === 'true') return true
  if (/^\d+$/.test(v)) {
    // Fastify ignores a hop count (it cannot tell the load balancer from a client that sends the header)
    throw new Error('a hop count is not supported: list the load balancers\' IPs/CIDRs, or true')
  }
  for (const part of v.split(',')) {
    const p = part.trim()
    try {
      if (p.includes('/')) ipaddr.parseCIDR(p); else ipaddr.parse(p)
    } catch {
      throw new Error('must be true, false, or a comma list of the proxies\' IPs/CIDRs')
    }
  }
  return v
})

const timeZone = makeValidator<string>((input: string) => {
  try {
    assertTimeZone(input)
  } catch {
    throw new Error(`"${input}" is not an IANA time zone`)
  }
  return input
})

const currency = makeValidator<string>((input: string) => {
  if (!/^\d{3}$/.test(input)) throw new Error('must be a 3-digit ISO 4217 numeric code')
  return input
})

const clusterNodes = makeValidator<Array<{ host: string, port: number }>>((input: string) => {
  const nodes = input.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (nodes.length === 0) throw new Error('must list host:port,...')
  return nodes.map((n) => {
    const m = /^(.+):(\d{1,5})$/.exec(n)
    if (m === null || Number(m[2]) > 65535) throw new Error(`"${n}" is not host:port`)
    return { host: m[1] as string, port: Number(m[2]) }
  })
})

const nonEmpty = makeValidator<string>((input: string) => {
  if (input.trim() === '') throw new Error('must not be empty')
  return input
})

const bankId = makeValidator<string>((input: string) => {
  if (!/^\d{4}$/.test(input)) throw new Error('must be 4 digits')
  return input
})

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

const spec = {
  EXTAUTH_CONSUMER_KEY: nonEmpty(),
  EXTAUTH_CLIENT_ID: nonEmpty(),
  EXTAUTH_BANK_ID: bankId(),
  EXTAUTH_ENTITY_IDS: list({ default: [] }),
  ALLOWED_SOURCE_IPS: cidrs({ default: [] }),
  TRUST_PROXY: trustProxy({ default: false }),
  HOST: str({ default: '0.0.0.0' }),
  PORT: port({ default: 8080 }),
  ADMIN_HOST: str({ default: '127.0.0.1' }),
  ADMIN_PORT: port({ default: 8081 }),
  ADMIN_TOKEN: str({ default: '' }),
  DECISION_DEADLINE_MS: intRange(50, PLATFORM_TIMEOUT_MS - 1)({ default: 1200 }),
  TIMEZONE: timeZone({ default: 'UTC' }),
  DEFAULT_CURRENCY: currency({ default: '356' }),
  RULES_DIR: str({ default: './rules' }),
  REDIS_URL: str({ default: '' }),
  REDIS_CLUSTER_NODES: clusterNodes({ default: undefined }),
  REDIS_KEY_PREFIX: str({ default: 'extauth:' }),
  LOG_LEVEL: str({ default: 'info', choices: levels }),
  SHED_EVENT_LOOP_DELAY_MS: intRange(0, 60000)({ default: 200 }),
  SHED_HEAP_USED_BYTES: intRange(0, Number.MAX_SAFE_INTEGER)({ default: 0 }),
  GRACE_MS: intRange(0, 600000)({ default: 10000 }),
  RULES_WATCH: bool({ default: true }),
  DECISION_RETENTION_DAYS: intRange(7, 400)({ default: 8 }),
  COMPENSATION_JOURNAL_DIR: str({ default: './var' })
}

export interface Config {
  consumerKey: string
  clientId: string
  bankId: string
  entityIds: string[]
  allowedSourceIps: CidrList
  trustProxy: boolean | string
  host: string
  port: number
  adminHost: string
  adminPort: number
  adminToken: string
  deadlineMs: number
  timezone: string
  defaultCurrency: string
  rulesDir: string
  redisUrl: string
  redisClusterNodes: Array<{ host: string, port: number }> | undefined
  redisKeyPrefix: string
  logLevel: typeof levels[number]
  /** 0 = not checked */
  shedEventLoopDelayMs: number
  /** 0 = not checked */
  shedHeapUsedBytes: number
  graceMs: number
  rulesWatch: boolean
  /** how long decisions and credit/debit references are kept (longer for decisions in longer limit windows) */
  decisionRetentionMs: number
  /** folder of the journals of deadline compensations not yet taken by Redis; '' = memory only (lost with the process) */
  compensationJournalDir: string
  /** outbound parties whose URL is set (GATEWAY_*, RISK_*, PREPAID_*) */
  adapters: AdapterOptionsFromEnv
  env: NodeJS.ProcessEnv
}

/** Throws a ConfigError naming the first bad variable. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const clean = cleanEnv(env, spec, {
    reporter: ({ errors }: ReporterOptions<typeof spec>) => {
      const first = Object.entries(errors)[0]
      if (first === undefined) return
      const [name, err] = first as [string, Error]
      const missing = err?.name === 'EnvMissingError' || /undefined|missing/i.test(err?.message ?? '')
      throw new ConfigError(name, missing ? 'is required' : (err?.message ?? 'is invalid'))
    }
  })
  if (clean.REDIS_URL !== '' && clean.REDIS_CLUSTER_NODES !== undefined) {
    throw new ConfigError('REDIS_CLUSTER_NODES', 'set either REDIS_URL or REDIS_CLUSTER_NODES, not both')
  }
  if (clean.REDIS_URL !== '' && !/^rediss?:\/\//.test(clean.REDIS_URL)) {
    throw new ConfigError('REDIS_URL', 'must start with redis:// or rediss://')
  }
  if (/[{}]/.test(clean.REDIS_KEY_PREFIX)) {
    // a brace in the prefix would become the Redis Cluster hash tag and put all keys in one slot
    throw new ConfigError('REDIS_KEY_PREFIX', 'must not contain { or }')
  }
  let adapters: AdapterOptionsFromEnv
  try {
    adapters = adapterOptionsFromEnv(env)
  } catch (err) {
    const message = (err as Error).message
    const variable = /^[A-Z][A-Z0-9_]+/.exec(message)?.[0] ?? 'adapter configuration'
    throw new ConfigError(variable, message.slice(variable.length).trim() || 'is invalid')
  }
  return {
    consumerKey: clean.EXTAUTH_CONSUMER_KEY,
    clientId: clean.EXTAUTH_CLIENT_ID,
    bankId: clean.EXTAUTH_BANK_ID,
    entityIds: clean.EXTAUTH_ENTITY_IDS,
    allowedSourceIps: clean.ALLOWED_SOURCE_IPS,
    trustProxy: clean.TRUST_PROXY,
    host: clean.HOST,
    port: clean.PORT,
    adminHost: clean.ADMIN_HOST,
    adminPort: clean.ADMIN_PORT,
    adminToken: clean.ADMIN_TOKEN,
    deadlineMs: clean.DECISION_DEADLINE_MS,
    timezone: clean.TIMEZONE,
    defaultCurrency: clean.DEFAULT_CURRENCY,
    rulesDir: clean.RULES_DIR,
    redisUrl: clean.REDIS_URL,
    redisClusterNodes: clean.REDIS_CLUSTER_NODES,
    redisKeyPrefix: clean.REDIS_KEY_PREFIX,
    logLevel: clean.LOG_LEVEL,
    shedEventLoopDelayMs: clean.SHED_EVENT_LOOP_DELAY_MS,
    shedHeapUsedBytes: clean.SHED_HEAP_USED_BYTES,
    graceMs: clean.GRACE_MS,
    rulesWatch: clean.RULES_WATCH,
    decisionRetentionMs: clean.DECISION_RETENTION_DAYS * 24 * 3600_000,
    compensationJournalDir: clean.COMPENSATION_JOURNAL_DIR.trim(),
    adapters,
    env
  }
}
