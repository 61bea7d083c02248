// Configuration from the environment (docs "Configuration"), validated once at start-up. Bad values stop the
// process with one line per bad variable, all of them at once (fixing one at a time and restarting to find
// the next is slow); secrets never appear in those lines.
import { cleanEnv, str, port, bool, makeValidator, type ReporterOptions } from 'envalid'
import ipaddr from 'ipaddr.js'
import { assertTimeZone } from './time.js'
import { adapterOptionsFromEnv, type AdapterOptionsFromEnv } from './adapters/config.js'
import { loadControlDefaults, ControlsFileError } from './controls/defaults-file.js'
import type { CardControls } from './controls/types.js'

/** The platform declines as timed out at 2000 ms; our own deadline must sit inside it. */
export const PLATFORM_TIMEOUT_MS = 2000

export interface ConfigProblem {
  variable: string
  message: string
}

export class ConfigError extends Error {
  /** the first bad variable */
  readonly variable: string
  /** every bad variable, in the order checked; the message has one line for each */
  readonly problems: readonly ConfigProblem[]
  constructor (variable: string, message: string, more: readonly ConfigProblem[] = []) {
    const problems = [{ variable, message }, ...more]
    super(problems.map(p => `${p.variable}: ${p.message}`).join('\n'))
    this.name = 'ConfigError'
    this.variable = variable
    this.problems = problems
  }

  static of (problems: readonly ConfigProblem[]): ConfigError {
    const [first, ...rest] = problems as [ConfigProblem, ...ConfigProblem[]]
    return new ConfigError(first.variable, first.message, rest)
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
  COMPENSATION_JOURNAL_DIR: str({ default: './var' }),
  CARD_CONTROLS_FILE: str({ default: '' })
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
  /** CARD_CONTROLS_FILE, '' when unset */
  cardControlsFile: string
  /** the program's default card controls (every kind enabled with no limit without the file) */
  cardControlDefaults: CardControls
  /** outbound parties whose URL is set (GATEWAY_*, RISK_*, PREPAID_*) */
  adapters: AdapterOptionsFromEnv
  env: NodeJS.ProcessEnv
}

/** Throws a ConfigError naming every bad variable (`problems`; `variable` is the first). */
export function loadConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const problems: ConfigProblem[] = []
  const bad = new Set<string>()
  const problem = (variable: string, message: string): void => { problems.push({ variable, message }); bad.add(variable) }
  const clean = cleanEnv(env, spec, {
    // collect rather than throw: the checks below still run on the variables that passed
    reporter: ({ errors }: ReporterOptions<typeof spec>) => {
      for (const [name, err] of Object.entries(errors) as Array<[string, Error | undefined]>) {
        const missing = err?.name === 'EnvMissingError' || /undefined|missing/i.test(err?.message ?? '')
        problem(name, missing ? 'is required' : (err?.message ?? 'is invalid'))
      }
    }
  })
  if (!bad.has('REDIS_URL') && !bad.has('REDIS_CLUSTER_NODES') && clean.REDIS_URL !== '' && clean.REDIS_CLUSTER_NODES !== undefined) {
    problem('REDIS_CLUSTER_NODES', 'set either REDIS_URL or REDIS_CLUSTER_NODES, not both')
  }
  if (!bad.has('REDIS_URL') && clean.REDIS_URL !== '' && !/^rediss?:\/\//.test(clean.REDIS_URL)) {
    problem('REDIS_URL', 'must start with redis:// or rediss://')
  }
  if (!bad.has('REDIS_KEY_PREFIX') && /[{}]/.test(clean.REDIS_KEY_PREFIX)) {
    // a brace in the prefix would become the Redis Cluster hash tag and put all keys in one slot
    problem('REDIS_KEY_PREFIX', 'must not contain { or }')
  }
  let adapters: AdapterOptionsFromEnv | undefined
  try {
    adapters = adapterOptionsFromEnv(env)
  } catch (err) {
    const message = (err as Error).message
    const variable = /^[A-Z][A-Z0-9_]+/.exec(message)?.[0] ?? 'adapter configuration'
    problem(variable, message.slice(variable.length).trim() || 'is invalid')
  }
  let cardControlDefaults: CardControls | undefined
  try {
    cardControlDefaults = loadControlDefaults(clean.CARD_CONTROLS_FILE)
  } catch (err) {
    if (!(err instanceof ControlsFileError)) throw err
    problem('CARD_CONTROLS_FILE', err.message)
  }
  if (problems.length > 0 || adapters === undefined || cardControlDefaults === undefined) throw ConfigError.of(problems)
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
    cardControlsFile: clean.CARD_CONTROLS_FILE,
    cardControlDefaults,
    adapters,
    env
  }
}
