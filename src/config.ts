// Configuration from the environment (docs "Configuration"), validated once at start-up. Bad values stop the
// process with one line per bad variable, all of them at once (fixing one at a time and restarting to find
// the next is slow); secrets never appear in those lines.
import { cleanEnv, str, port, bool, makeValidator, type ReporterOptions } from 'envalid'
import ipaddr from 'ipaddr.js'
import { assertTimeZone } from './time.js'
import { adapterOptionsFromEnv, type AdapterOptionsFromEnv } from './adapters/index.js'
import { loadControlDefaults, ControlsFileError } from './controls/defaults-file.js'
import type { CardControls } from './domain/controls.js'
import { EVENTS_BACKLOG_MAX_DEFAULT, EVENT_TYPES, isWebhookSecret } from './domain/events.js'
import { Keyring } from './access/keyring.js'
import { AdminKeysError } from './access/keys-file.js'
import { adminTlsOptions, AdminTlsError, type AdminTls } from './access/admin-tls.js'
import { loadPolicy, StandInPolicyError, type StandInPolicy } from './standin/policy.js'
import { settlementConfigFromEnv, SettlementConfigError, type SettlementConfig } from './settlement/config.js'

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

/** IPs and CIDRs, comma-separated; IPv4 only as a.b.c.d. */
function parseCidrs (input: string): CidrList {
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
}

const cidrs = makeValidator<CidrList>(parseCidrs)

function singleHost (addr: ipaddr.IPv4 | ipaddr.IPv6): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  return [addr, addr.kind() === 'ipv4' ? 32 : 128]
}

/** The most proxies TRUST_PROXY may count in front of the service. */
export const TRUST_PROXY_HOPS_MAX = 10

/**
 * TRUST_PROXY: true, false, a hop count (the number of proxies in front of the service), or the proxies'
 * IPs/CIDRs (kept as the string Fastify takes).
 */
const trustProxy = makeValidator<boolean | number | string>((input: string) => {
  const v = input.trim()
  if (v === '' || v === 'false' || v === '0') return false
  if (v === 'true') return true
  if (/^[0-9]+$/.test(v)) {
    const hops = Number(v)
    if (hops > TRUST_PROXY_HOPS_MAX) throw new Error(`a hop count must be from 1 to ${TRUST_PROXY_HOPS_MAX}`)
    return hops
  }
  try {
    if (parseCidrs(v).length === 0) throw new Error('empty')
  } catch {
    throw new Error('must be true, false, a hop count, or a comma list of the proxies\' IPs/CIDRs')
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

/** redis:// or rediss://, a host, an optional port and database number: what ioredis reads from a URL */
const redisUrl = makeValidator<string>((input: string) => {
  const v = input.trim()
  if (v === '') return ''
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new Error('is not a URL (redis://host:port[/db])')
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error('must start with redis:// or rediss://')
  if (u.hostname === '') throw new Error('names no host (redis://host:port[/db])')
  if (!/^\/?(\d{1,2})?$/.test(u.pathname)) throw new Error('the path must be a database number (redis://host:port/0)')
  return v
})

/** an http(s) URL with no query, fragment or credentials, '' when unset; `path` also takes a path starting with / */
const webBase = (path: boolean) => makeValidator<string>((input: string) => {
  const v = input.trim()
  if (v === '' || (path && /^\/[^?#]*$/.test(v))) return v
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new Error(path ? 'must be an http(s) URL or a path starting with /' : 'must be an http(s) URL')
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('must be an http or https URL')
  if (u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '') throw new Error('must have no query, fragment or credentials')
  return v
})

const sentinelName = makeValidator<string>((input: string) => {
  const v = input.trim()
  if (v === '') return ''
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(v)) throw new Error('must be the name Sentinel monitors (letters, digits, . _ -)')
  return v
})

const nonEmpty = makeValidator<string>((input: string) => {
  if (input.trim() === '') throw new Error('must not be empty')
  return input
})

const bankId = makeValidator<string>((input: string) => {
  if (!/^\d{4}$/.test(input)) throw new Error('must be 4 digits')
  return input
})

/** HOST as a URL names it: every address is reached on loopback; an IPv6 address goes in brackets */
function urlHost (host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1'
  return host.includes(':') ? `[${host}]` : host
}

/** where the admin listener serves the docs/ pages itself (http/openapi.ts) */
export const DOCS_FILES_PREFIX = '/admin/docs/files/'

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
  PUBLIC_URL: webBase(false)({ default: '' }),
  DOCS_BASE_URL: webBase(true)({ default: '' }),
  ADMIN_TOKEN: str({ default: '' }),
  ADMIN_KEYS_FILE: str({ default: '' }),
  ADMIN_TLS_CERT: str({ default: '' }),
  ADMIN_TLS_KEY: str({ default: '' }),
  ADMIN_TLS_CA: str({ default: '' }),
  AUDIT_RETENTION_DAYS: intRange(1, 3650)({ default: 90 }),
  DECISION_DEADLINE_MS: intRange(50, PLATFORM_TIMEOUT_MS - 1)({ default: 1200 }),
  TIMEZONE: timeZone({ default: 'UTC' }),
  DEFAULT_CURRENCY: currency({ default: '356' }),
  RULES_DIR: str({ default: './rules' }),
  REDIS_URL: redisUrl({ default: '' }),
  REDIS_CLUSTER_NODES: clusterNodes({ default: undefined }),
  REDIS_SENTINELS: clusterNodes({ default: undefined }),
  REDIS_SENTINEL_NAME: sentinelName({ default: '' }),
  REDIS_WAIT_REPLICAS: intRange(0, 16)({ default: 0 }),
  DECISION_RECORD_FORMAT: str({ default: 'compact', choices: ['compact', 'json'] }),
  HTTP_HEADERS_TIMEOUT_MS: intRange(100, PLATFORM_TIMEOUT_MS)({ default: 1000 }),
  HTTP_REQUEST_TIMEOUT_MS: intRange(100, PLATFORM_TIMEOUT_MS)({ default: 1500 }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: intRange(100, 600_000)({ default: 5000 }),
  REDIS_KEY_PREFIX: str({ default: 'extauth:' }),
  LOG_LEVEL: str({ default: 'info', choices: levels }),
  SHED_EVENT_LOOP_DELAY_MS: intRange(0, 60000)({ default: 200 }),
  SHED_HEAP_USED_BYTES: intRange(0, Number.MAX_SAFE_INTEGER)({ default: 0 }),
  GRACE_MS: intRange(0, 600000)({ default: 10000 }),
  CONSOLE_IDLE_TIMEOUT_MS: intRange(10000, 86400000)({ default: 900000 }),
  RULES_WATCH: bool({ default: true }),
  DECISION_RETENTION_DAYS: intRange(7, 400)({ default: 8 }),
  WEBHOOK_URL: str({ default: '' }),
  WEBHOOK_SECRET: str({ default: '' }),
  WEBHOOK_EVENTS: list({ default: [] }),
  EVENTS_RELAY: bool({ default: true }),
  EVENTS_SENDS_MAX: intRange(1, 1024)({ default: 32 }),
  EVENTS_BACKLOG_MAX: intRange(1024, 1_000_000_000)({ default: EVENTS_BACKLOG_MAX_DEFAULT }),
  COMPENSATION_JOURNAL_DIR: str({ default: './var' }),
  CARD_CONTROLS_FILE: str({ default: '' }),
  STANDIN_POLICY_FILE: str({ default: '' }),
  STANDIN_JOURNAL_DIR: str({ default: './var/standin' })
}

export interface Config {
  consumerKey: string
  clientId: string
  bankId: string
  entityIds: string[]
  allowedSourceIps: CidrList
  /** true, false, a hop count, or the proxies' IPs/CIDRs */
  trustProxy: boolean | number | string
  host: string
  port: number
  adminHost: string
  adminPort: number
  /** PUBLIC_URL: the public listener as clients reach it, for the API reference (default: 127.0.0.1 or HOST, and PORT) */
  publicUrl: string
  /** DOCS_BASE_URL, ending with /: where the API reference links its docs/… pages (default: the admin listener's own copy) */
  docsBaseUrl: string
  adminToken: string
  /** ADMIN_TOKEN and the keys of ADMIN_KEYS_FILE (reloaded on SIGHUP); empty: no admin listener */
  adminKeys: Keyring
  /** ADMIN_KEYS_FILE, '' when unset */
  adminKeysFile: string
  /** ADMIN_TLS_*: the admin listener speaks HTTPS, and with a CA requires client certificates */
  adminTls?: AdminTls
  /** how long audit records are kept in the store (AUDIT_RETENTION_DAYS) */
  auditRetentionMs: number
  deadlineMs: number
  timezone: string
  defaultCurrency: string
  rulesDir: string
  redisUrl: string
  redisClusterNodes: Array<{ host: string, port: number }> | undefined
  /** the Sentinels to ask for the primary of `redisSentinelName` (undefined = no Sentinel) */
  redisSentinels: Array<{ host: string, port: number }> | undefined
  redisSentinelName: string
  /** replicas that must hold an approval before it is answered 00 (0 = do not wait) */
  redisWaitReplicas: number
  /** DECISION_RECORD_FORMAT: how new decision records are written (both are read) */
  decisionRecordFormat: 'compact' | 'json'
  /** public listener: the whole header block must arrive within this (from the first byte) */
  httpHeadersTimeoutMs: number
  /** public listener: the whole request, headers and body, must arrive within this */
  httpRequestTimeoutMs: number
  /** public listener: an idle keep-alive connection is closed after this */
  httpKeepAliveTimeoutMs: number
  redisKeyPrefix: string
  logLevel: typeof levels[number]
  /** 0 = not checked */
  shedEventLoopDelayMs: number
  /** 0 = not checked */
  shedHeapUsedBytes: number
  graceMs: number
  /** the operator console's session ends after this long without a request (CONSOLE_IDLE_TIMEOUT_MS) */
  consoleIdleTimeoutMs: number
  rulesWatch: boolean
  /** how long decisions and credit/debit references are kept (longer for decisions in longer limit windows) */
  decisionRetentionMs: number
  /** folder of the journals of deadline compensations not yet taken by Redis; '' = memory only (lost with the process) */
  compensationJournalDir: string
  /** CARD_CONTROLS_FILE, '' when unset */
  cardControlsFile: string
  /** the program's default card controls (every kind enabled with no limit without the file) */
  cardControlDefaults: CardControls
  /** STANDIN_POLICY_FILE: deciding while the store is unreachable (docs/operations/standin.md); absent: 05 as before */
  standIn?: { policyFile: string, policy: StandInPolicy, journalDir: string }
  /** WEBHOOK_*: where events are sent (docs/api/events.md); absent: not sent, the outbox keeps the newest */
  webhook?: {
    url: string
    secret: string
    types?: string[]
    /** EVENTS_RELAY: this instance sends events (false: it only writes them; other instances send) */
    relay: boolean
    /** EVENTS_SENDS_MAX: sends in flight at most */
    sendsMax: number
  }
  /** EVENTS_BACKLOG_MAX: undelivered events kept at most, over all buckets */
  eventsBacklogMax?: number
  /** outbound parties whose URL is set (GATEWAY_*, RISK_*, PREPAID_*) */
  adapters: AdapterOptionsFromEnv
  /** SETTLEMENT_MODE, HOLD_EXPIRY, ...: holds and the platform's statement (absent: final, no maps) */
  settlement?: SettlementConfig
  env: NodeJS.ProcessEnv
}

/** Variables that only mean something with a Redis store. */
const REDIS_ONLY = ['REDIS_KEY_PREFIX', 'REDIS_WAIT_REPLICAS', 'REDIS_SENTINEL_NAME', 'DECISION_RECORD_FORMAT'] as const

/**
 * Exactly one way to reach Redis, or none at all (then, and only then, the embedded store): a setting that
 * would be ignored is refused, so a typo cannot put a production instance on memory.
 */
function checkRedisSettings (env: NodeJS.ProcessEnv, problem: (variable: string, message: string) => void, clean: {
  REDIS_URL: string
  REDIS_CLUSTER_NODES: unknown
  REDIS_SENTINELS: unknown
  REDIS_SENTINEL_NAME: string
  REDIS_WAIT_REPLICAS: number
}): void {
  const targets = [
    ['REDIS_URL', clean.REDIS_URL !== ''],
    ['REDIS_CLUSTER_NODES', clean.REDIS_CLUSTER_NODES !== undefined],
    ['REDIS_SENTINELS', clean.REDIS_SENTINELS !== undefined]
  ].filter(([, set]) => set === true).map(([name]) => name as string)
  if (targets.length > 1) {
    return problem(targets[1] as string, `set only one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS (${targets.join(' and ')} are set)`)
  }
  if (clean.REDIS_SENTINELS !== undefined && clean.REDIS_SENTINEL_NAME === '') {
    return problem('REDIS_SENTINEL_NAME', 'is required with REDIS_SENTINELS (the name the Sentinels monitor)')
  }
  if (clean.REDIS_SENTINEL_NAME !== '' && clean.REDIS_SENTINELS === undefined) {
    return problem('REDIS_SENTINEL_NAME', 'needs REDIS_SENTINELS (host:port,... of the Sentinels)')
  }
  if (targets.length === 0) {
    // set but empty counts as unset (compose files write `REDIS_URL=`); anything else needs a Redis
    const stray = REDIS_ONLY.find((name) => (env[name] ?? '').trim() !== '')
    if (stray !== undefined) {
      return problem(stray, 'is a Redis setting, but no Redis is configured (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES); without one the embedded in-memory store would be used')
    }
  }
  if (clean.REDIS_WAIT_REPLICAS > 0 && clean.REDIS_CLUSTER_NODES !== undefined) {
    return problem('REDIS_WAIT_REPLICAS', 'is not supported with REDIS_CLUSTER_NODES (use REDIS_URL or REDIS_SENTINELS)')
  }
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
  // a variable that failed its own check is not in `clean` (reading it throws): check combinations of good ones
  if (!['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_WAIT_REPLICAS'].some((v) => bad.has(v))) checkRedisSettings(env, problem, clean)
  if (!bad.has('HTTP_HEADERS_TIMEOUT_MS') && !bad.has('HTTP_REQUEST_TIMEOUT_MS') && clean.HTTP_HEADERS_TIMEOUT_MS > clean.HTTP_REQUEST_TIMEOUT_MS) {
    // Node refuses a header timeout longer than the whole request's
    problem('HTTP_HEADERS_TIMEOUT_MS', `must not be above HTTP_REQUEST_TIMEOUT_MS (${clean.HTTP_REQUEST_TIMEOUT_MS})`)
  }
  if (!bad.has('TRUST_PROXY') && !bad.has('ALLOWED_SOURCE_IPS') && clean.TRUST_PROXY === true && clean.ALLOWED_SOURCE_IPS.length > 0) {
    // true reads the left-most X-Forwarded-For entry, which the caller writes (a balancer appends its own)
    problem('TRUST_PROXY', 'true cannot be used with ALLOWED_SOURCE_IPS: it takes the source address from the left-most X-Forwarded-For entry, which the caller writes; set TRUST_PROXY to the proxies\' IPs/CIDRs or to their number (a hop count)')
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
  const webhook = webhookConfig(clean.WEBHOOK_URL.trim(), clean.WEBHOOK_SECRET.trim(), clean.WEBHOOK_EVENTS, {
    relay: bad.has('EVENTS_RELAY') || clean.EVENTS_RELAY, sendsMax: bad.has('EVENTS_SENDS_MAX') ? 1 : clean.EVENTS_SENDS_MAX
  })
  let cardControlDefaults: CardControls | undefined
  try {
    cardControlDefaults = loadControlDefaults(clean.CARD_CONTROLS_FILE)
  } catch (err) {
    if (!(err instanceof ControlsFileError)) throw err
    problem('CARD_CONTROLS_FILE', err.message)
  }
  let standIn: Config['standIn']
  if (clean.STANDIN_POLICY_FILE.trim() !== '') {
    try {
      standIn = { policyFile: clean.STANDIN_POLICY_FILE.trim(), policy: loadPolicy(clean.STANDIN_POLICY_FILE.trim()), journalDir: clean.STANDIN_JOURNAL_DIR.trim() }
    } catch (err) {
      if (!(err instanceof StandInPolicyError)) throw err
      problem('STANDIN_POLICY_FILE', err.message)
    }
    if (clean.STANDIN_JOURNAL_DIR.trim() === '') problem('STANDIN_JOURNAL_DIR', 'must name a folder: stand-in approvals are flushed there before they are answered')
  }
  let adminKeys: Keyring | undefined
  try {
    adminKeys = new Keyring(clean.ADMIN_TOKEN, clean.ADMIN_KEYS_FILE.trim())
  } catch (err) {
    if (!(err instanceof AdminKeysError)) throw err
    problem('ADMIN_KEYS_FILE', err.message)
  }
  let adminTls: AdminTls | undefined
  try {
    adminTls = adminTlsOptions({ cert: clean.ADMIN_TLS_CERT.trim(), key: clean.ADMIN_TLS_KEY.trim(), ca: clean.ADMIN_TLS_CA.trim() })
  } catch (err) {
    if (!(err instanceof AdminTlsError)) throw err
    problem(err.variable, err.message)
  }
  let settlement: SettlementConfig | undefined
  try {
    settlement = settlementConfigFromEnv(env)
  } catch (err) {
    if (!(err instanceof SettlementConfigError)) throw err
    problem(err.variable, err.message)
  }
  if (problems.length > 0 || adapters === undefined || cardControlDefaults === undefined || adminKeys === undefined) throw ConfigError.of(problems)
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
    publicUrl: (clean.PUBLIC_URL === '' ? `http://${urlHost(clean.HOST)}:${clean.PORT}` : clean.PUBLIC_URL).replace(/\/$/, ''),
    docsBaseUrl: (clean.DOCS_BASE_URL === '' ? DOCS_FILES_PREFIX : clean.DOCS_BASE_URL).replace(/\/?$/, '/'),
    adminToken: clean.ADMIN_TOKEN,
    adminKeys,
    adminKeysFile: clean.ADMIN_KEYS_FILE.trim(),
    ...(adminTls !== undefined ? { adminTls } : {}),
    auditRetentionMs: clean.AUDIT_RETENTION_DAYS * 24 * 3600_000,
    deadlineMs: clean.DECISION_DEADLINE_MS,
    timezone: clean.TIMEZONE,
    defaultCurrency: clean.DEFAULT_CURRENCY,
    rulesDir: clean.RULES_DIR,
    redisUrl: clean.REDIS_URL,
    redisClusterNodes: clean.REDIS_CLUSTER_NODES,
    redisSentinels: clean.REDIS_SENTINELS,
    redisSentinelName: clean.REDIS_SENTINEL_NAME,
    redisWaitReplicas: clean.REDIS_WAIT_REPLICAS,
    decisionRecordFormat: clean.DECISION_RECORD_FORMAT as Config['decisionRecordFormat'],
    httpHeadersTimeoutMs: clean.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: clean.HTTP_REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: clean.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    redisKeyPrefix: clean.REDIS_KEY_PREFIX,
    logLevel: clean.LOG_LEVEL,
    shedEventLoopDelayMs: clean.SHED_EVENT_LOOP_DELAY_MS,
    shedHeapUsedBytes: clean.SHED_HEAP_USED_BYTES,
    graceMs: clean.GRACE_MS,
    consoleIdleTimeoutMs: clean.CONSOLE_IDLE_TIMEOUT_MS,
    rulesWatch: clean.RULES_WATCH,
    decisionRetentionMs: clean.DECISION_RETENTION_DAYS * 24 * 3600_000,
    compensationJournalDir: clean.COMPENSATION_JOURNAL_DIR.trim(),
    cardControlsFile: clean.CARD_CONTROLS_FILE,
    cardControlDefaults,
    ...(standIn !== undefined ? { standIn } : {}),
    ...(webhook !== undefined ? { webhook } : {}),
    eventsBacklogMax: clean.EVENTS_BACKLOG_MAX,
    adapters,
    ...(settlement !== undefined ? { settlement } : {}),
    env
  }
}

function webhookConfig (url: string, secret: string, types: string[], relay: { relay: boolean, sendsMax: number }): Config['webhook'] {
  if (url === '') {
    if (secret !== '') throw new ConfigError('WEBHOOK_URL', 'is required when WEBHOOK_SECRET is set')
    return undefined
  }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigError('WEBHOOK_URL', 'must be an http:// or https:// URL')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError('WEBHOOK_URL', 'must be an http:// or https:// URL')
  if (!isWebhookSecret(secret)) throw new ConfigError('WEBHOOK_SECRET', 'must be whsec_ followed by at least 16 bytes in base64')
  const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t))
  if (unknown.length > 0) throw new ConfigError('WEBHOOK_EVENTS', `unknown event type ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`)
  return { url, secret, ...(types.length > 0 ? { types } : {}), ...relay }
}
