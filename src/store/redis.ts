// The Redis store: every state change is one Lua script on one slot (lua.ts; each script's contract heads its file in lua/).
import { alreadyReversed, insufficientFunds } from './rejections.js'
import { AssertionError } from 'node:assert'
import { Redis, Cluster, Command, ReplyError, type RedisOptions, type ClusterOptions } from 'ioredis'
import { ERR_STORE_NOT_DONE, ERR_STORE_NOT_REPLICATED, ERR_STORE_OUTCOME_UNKNOWN, LifecycleStale, reject, type StoreRejectionCode } from '../errors.js'
import type { ResponseCode } from '../domain/request.js'
import { Keys, bucketOf, refIndexOf } from './keys.js'
import { flatEvent } from './outbox-entry.js'
import { ABANDON_LUA, AUDIT_LUA, AUTHORIZE_LUA, CARD_CONTROLS_LUA, MONEY_OP_LUA, PUT_CARD_LUA, PUT_CUSTOMER_LUA, REVERSE_LUA, UNLOCK_LIFECYCLE_LUA, RENEW_LIFECYCLE_LUA, PUT_LIFECYCLE_LUA } from './lua.js'
import type { ControlEntries, ControlsInput } from '../domain/controls.js'
import type { AuditContext, AuditRecord } from '../domain/audit.js'
import { defaultArgs, entriesFromFields, pairsToObject, patchToFields } from './control-fields.js'
import {
  AUDIT_RETENTION_MS_DEFAULT, auditUrnOf, CONTROL_DAILY_RETAIN_MS, DECISION_RETENTION_MS_DEFAULT, EVENTS_BACKLOG_MAX_DEFAULT, backlogPerBucket, type MoneyEvent, type MoneyOpKind, LIFECYCLE_TTL_SECONDS, LIFECYCLE_INDEX_MAX, lifecycleRefOf, lifecycleUrnsOf, type LifecycleRef, decisionTtlMs, type LifecycleKind, type AbandonInput, type AbandonOutcome, type AuthorizeInput,
  type AuthorizeResult, type CardStatus, type Customer, type CustomerStatus, type DecisionReason,
  type DecisionRecord, type MoneyOpResult, type ReversalResult, type Store
} from './types.js'
import { MAX_BALANCE, assertAmount, controlHitOf } from './record.js'
import { dailyTails, decodeRecord, eventOwnPart, headOwnPart, limitTails, recordRest } from './record-format.js'
import { AUTHORIZE_FUNCTION, AUTHORIZE_LIBRARY, fcallRefused, loadFunctionLibrary } from './functions.js'
import { WriteCoalescer } from './coalesce-writes.js'

type Client = Redis | Cluster

const CONTROL_DAILY_RETAIN_ARG = String(CONTROL_DAILY_RETAIN_MS)

/** How much of the time left an approval's WAIT leaves for its reply (see authorize). */
const WAIT_REPLY_RESERVE_MS = 200
type Reply = unknown

interface ScriptCommands {
  extauthAuthorize (numKeys: string, ...args: Array<string | number>): Promise<Reply>
  extauthAbandon (numKeys: number, ...args: Array<string | number>): Promise<Reply>
  extauthReverse (numKeys: number, ...args: Array<string | number>): Promise<Reply>
  extauthMoneyOp (...args: Array<string | number>): Promise<Reply>
  extauthPutCustomer (...args: Array<string | number>): Promise<Reply>
  extauthPutCard (...args: Array<string | number>): Promise<Reply>
  extauthCardControls (...args: Array<string | number>): Promise<Reply>
  extauthAudit (...args: Array<string | number>): Promise<Reply>
}

export interface RedisConnectOptions {
  url?: string
  clusterNodes?: Array<{ host: string, port: number }>
  /** the Sentinels to ask where the primary of `sentinelName` is; the client follows it across failovers */
  sentinels?: Array<{ host: string, port: number }>
  sentinelName?: string
  /** rejects a command still unanswered after this long, so callers never wait forever */
  commandTimeoutMs?: number
}

/**
 * A client that fails fast while disconnected (no offline queue: a decision must not wait for a
 * reconnect) and does not resend commands that were in flight when the connection dropped (the pipeline
 * compensates for those instead).
 */
export function createRedisClient (opts: RedisConnectOptions): Client {
  const common: RedisOptions = {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: opts.commandTimeoutMs ?? 5000,
    lazyConnect: true,
    connectTimeout: 2000,
    retryStrategy: (times: number) => Math.min(50 * times, 1000)
  }
  if (opts.clusterNodes !== undefined) {
    const clusterOpts: ClusterOptions = {
      enableOfflineQueue: false,
      lazyConnect: true,
      redisOptions: common,
      clusterRetryStrategy: (times: number) => Math.min(100 * times, 2000)
    }
    return new Cluster(opts.clusterNodes, clusterOpts)
  }
  if (opts.sentinels !== undefined) {
    return new Redis({
      ...common,
      sentinels: opts.sentinels,
      name: opts.sentinelName ?? '',
      role: 'master',
      // reconnect as soon as a Sentinel announces +switch-master, rather than when the old primary's
      // connection is seen dead (which a network partition can hide for a long time)
      failoverDetector: true,
      // keep asking: the Sentinels may themselves be restarting; each round tries every one of them
      sentinelRetryStrategy: (times: number) => Math.min(100 * times, 1000),
      sentinelCommandTimeout: 500,
      // a primary demoted to replica answers READONLY to a write: reconnect, asking the Sentinels again
      reconnectOnError: (err: Error) => err.message.startsWith('READONLY') ? 2 : false
    })
  }
  return new Redis(opts.url ?? 'redis://127.0.0.1:6379', common)
}

/**
 * Whether a command sent now is written to Redis in this tick. ioredis (offline queue off) rejects a command
 * it cannot write at once; checking the same conditions first tells "never sent" from "sent, reply lost"
 * without reading its error text. A cluster routes asynchronously, so only its own state is known here.
 */
function writableNow (client: Client): boolean {
  if (client.status !== 'ready') return false
  if (client instanceof Cluster) return true
  return client.stream.writable
}

/**
 * Runs one command and types its failure: not sent, or refused by Redis before it changed anything (every
 * script checks before it writes) → ERR_STORE_NOT_DONE; anything else (timeout, connection lost while
 * waiting) → ERR_STORE_OUTCOME_UNKNOWN. A failed assertion in a script is a programmer error and stays one.
 */
export async function send<T> (client: Client, call: () => Promise<T>): Promise<T> {
  if (!writableNow(client)) throw new ERR_STORE_NOT_DONE(`redis is ${client.status}`)
  try {
    return await call()
  } catch (err) {
    if (err instanceof ReplyError) {
      const message = (err as Error).message
      if (message.includes('EXTAUTH_ASSERT')) throw new AssertionError({ message })
      throw new ERR_STORE_NOT_DONE(message)
    }
    throw new ERR_STORE_OUTCOME_UNKNOWN((err as Error).message)
  }
}

/**
 * The authorize function's call: FCALL, the function, then its key count, keys and arguments (already
 * strings, as authorizeArgs gives them). The same command ioredis's call('FCALL', ...) builds, without the copy
 * its constructor makes of the arguments with Array.prototype.flat, which costs about 0.08 µs an argument on
 * Node 20 (a decision has some thirty). test/store/fcall-command.test.ts compares the two.
 */
export function fcallCommand (args: string[]): Command {
  const command = new Command('FCALL', [], { replyEncoding: 'utf8' })
  command.args = [AUTHORIZE_FUNCTION, ...args]
  command.toWritable = fcallText
  return command
}

/**
 * The FCALL command's text (RESP), as Command.toWritable gives it, put together in one join: ioredis adds each
 * argument's parts to a string one by one, some 130 string pieces (about 5 KB of a decision's allocation)
 * flattened again when written. The same text (test/store/fcall-command.test.ts).
 */
function fcallText (this: Command): string {
  const args = this.args as string[]
  const n = args.length
  const parts = new Array<string>(3 * n + 1)
  parts[0] = `*${n + 1}\r\n$5\r\nFCALL\r\n`
  for (let i = 0, j = 1; i < n; i++) {
    const a = args[i] as string
    parts[j++] = bulkHeader(Buffer.byteLength(a))
    parts[j++] = a
    parts[j++] = '\r\n'
  }
  return parts.join('')
}

/**
 * A bulk string's header, `$<bytes>\r\n`: made once for the lengths a decision's arguments have (keys, the
 * record's rest, the event's parts), so that a call does not make some thirty small strings again.
 */
const BULK_HEADERS_KEPT = 2048
const bulkHeaders = Array.from({ length: BULK_HEADERS_KEPT }, (_, len) => `$${len}\r\n`)
function bulkHeader (len: number): string {
  return len < BULK_HEADERS_KEPT ? bulkHeaders[len] as string : `$${len}\r\n`
}

function defineScripts (client: Client): ScriptCommands {
  client.defineCommand('extauthAuthorize', { lua: AUTHORIZE_LUA })
  client.defineCommand('extauthAbandon', { lua: ABANDON_LUA })
  client.defineCommand('extauthReverse', { lua: REVERSE_LUA })
  client.defineCommand('extauthMoneyOp', { lua: MONEY_OP_LUA, numberOfKeys: 3 })
  client.defineCommand('extauthPutCustomer', { lua: PUT_CUSTOMER_LUA, numberOfKeys: 2 })
  client.defineCommand('extauthPutCard', { lua: PUT_CARD_LUA, numberOfKeys: 3 })
  client.defineCommand('extauthCardControls', { lua: CARD_CONTROLS_LUA, numberOfKeys: 4 })
  client.defineCommand('extauthAudit', { lua: AUDIT_LUA, numberOfKeys: 1 })
  return client as unknown as ScriptCommands
}

export interface RedisStoreOptions {
  prefix: string
  /** EVENTS_BACKLOG_MAX: the outbox's bound over all buckets */
  backlogMax?: number
  retentionMs?: number
  /** AUDIT_RETENTION_DAYS in ms */
  auditRetentionMs?: number
  /**
   * Replicas that must hold an approval (and a deadline compensation) before it counts as done: after the
   * commit, WAIT on the same connection. 0 = do not wait (replication stays asynchronous).
   */
  waitReplicas?: number
  /** how long a compensation waits for its replicas before it is retried */
  abandonWaitMs?: number
  /**
   * How new decision records are written: 'compact' (default), or 'json', the format every earlier version
   * reads (for the first step of a rolling upgrade; src/store/record-format.ts). Both are read.
   */
  recordFormat?: 'compact' | 'json'
  /**
   * Whether authorize runs as a Redis function (functions.ts; default true, EVALSHA where Redis has none);
   * false: always EVALSHA (the benches that swap the script's text)
   */
  functions?: boolean
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const
  readonly client: Client
  readonly keys: Keys
  private readonly scripts: ScriptCommands
  private readonly streamMaxLen: number
  private readonly streamMaxLenArg: string
  private readonly retentionMs: number
  private readonly auditKeepS: string
  /**
   * Redis clock minus ours. The authorize script compares the deadline with Redis TIME; without this a
   * Redis host whose clock runs ahead would refuse every commit, and one behind would commit too late.
   */
  private clockOffsetMs = 0
  private offsetTimer: NodeJS.Timeout | null = null
  private readonly waitReplicas: number
  private readonly abandonWaitMs: number
  private readonly compact: boolean
  /** the authorize commands of one turn of the event loop in one write (coalesce-writes.ts) */
  private readonly coalescer = new WriteCoalescer()
  /** authorize through FCALL: null until the library is loaded, false where Redis will not (EVALSHA) */
  private functions: boolean | null
  /** the library's load under way, if one is */
  private loading: Promise<void> | null = null

  /** called with the bucket of every event this store wrote (the local relay's hint) */
  onEvent: ((bucket: number) => void) | null = null

  constructor (client: Client, opts: RedisStoreOptions) {
    if ((opts.waitReplicas ?? 0) > 0 && client instanceof Cluster) throw new Error('waitReplicas is not supported on a Redis Cluster')
    this.client = client
    this.waitReplicas = opts.waitReplicas ?? 0
    this.abandonWaitMs = opts.abandonWaitMs ?? 1000
    this.compact = opts.recordFormat !== 'json'
    this.functions = opts.functions === false ? false : null
    this.keys = new Keys(opts.prefix)
    this.scripts = defineScripts(client)
    this.streamMaxLen = backlogPerBucket(opts.backlogMax ?? EVENTS_BACKLOG_MAX_DEFAULT)
    this.streamMaxLenArg = String(this.streamMaxLen)
    this.retentionMs = opts.retentionMs ?? DECISION_RETENTION_MS_DEFAULT
    this.auditKeepS = String(Math.ceil((opts.auditRetentionMs ?? AUDIT_RETENTION_MS_DEFAULT) / 1000))
  }

  /** the admin scripts' two audit arguments: the route's context (JSON, '' for none) and the retention */
  private auditArgs (audit: AuditContext | undefined): [string, string] {
    return [audit === undefined ? '' : JSON.stringify(audit), this.auditKeepS]
  }

  private get retentionSeconds (): string {
    return String(Math.ceil(this.retentionMs / 1000))
  }

  /** Connects (the client is lazy) and checks the server answers. */
  async connect (): Promise<void> {
    // measured on every (re)connection and every 30 s, also when Redis is down at start-up
    if (this.offsetTimer === null) {
      this.client.on('ready', () => {
        this.measureClockOffset().catch(() => {})
        // a Redis that came back (restarted, a new primary) may not have the library: load it before a
        // decision finds it missing
        if (this.functions !== false) this.loadFunctions().catch(() => {})
      })
      this.offsetTimer = setInterval(() => { this.measureClockOffset().catch(() => {}) }, 30_000)
      this.offsetTimer.unref()
    }
    if (this.client.status === 'wait') await this.client.connect()
    await this.ping()
    await this.measureClockOffset()
    // now rather than on the first decision; a state that passes (a replica, loading) leaves it to that
    // (the 'ready' listener has started it: this waits for that load, or loads if it did not get through)
    if (this.functions === null) await this.loadFunctions().catch(() => {})
  }

  /** Whether authorize runs as a Redis function (true), with EVALSHA (false), or is not known yet (null). */
  get usesFunctions (): boolean | null {
    return this.functions
  }

  /**
   * FUNCTION LOAD REPLACE of the authorize library, on every primary of a cluster: the same name is the same
   * code, so loading it again changes nothing. Where Redis will not run it, the store stays on EVALSHA.
   */
  private async loadFunctions (): Promise<void> {
    // one load at a time: the decisions in flight when Redis lost the library all wait for the same one
    this.loading ??= (async () => { this.functions = await loadFunctionLibrary(this.client, AUTHORIZE_LIBRARY) })().finally(() => { this.loading = null })
    await this.loading
  }

  /**
   * The authorize call: FCALL of the library's function, or EVALSHA of the same code. A reply saying the
   * function is not there (a Redis restarted empty, a first call) means nothing ran: the library is loaded
   * and the call sent once more. One saying FCALL is not allowed or not known here (an ACL, a proxy) also
   * means nothing ran: the script goes with EVALSHA, from then on.
   */
  private async authorizeCall (args: string[]): Promise<unknown> {
    this.coalescer.before(this.client)
    if (this.functions !== false) {
      try {
        return await this.client.sendCommand(fcallCommand(args))
      } catch (err) {
        const refused = err instanceof ReplyError ? fcallRefused((err as Error).message) : null
        if (refused === null) throw err
        if (refused === 'refused') this.functions = false
        else {
          await this.loadFunctions()
          if (this.functions === true) return await this.client.sendCommand(fcallCommand(args))
        }
      }
    }
    return await this.scripts.extauthAuthorize(...(args as [string, ...string[]]))
  }

  private async measureClockOffset (): Promise<void> {
    const before = Date.now()
    const [sec, usec] = await this.client.time()
    const after = Date.now()
    // a slow round trip says little about the offset; keep the last good one
    if (after - before > 50) return
    this.clockOffsetMs = Number(sec) * 1000 + Math.floor(Number(usec) / 1000) - Math.round((before + after) / 2)
  }

  get clockOffset (): number {
    return this.clockOffsetMs
  }

  /**
   * The authorize script's key count, keys and arguments for this input, as authorize sends them (see
   * lua/includes/authorize-body.lua); bench/script-cost.ts sends the same with redis-benchmark.
   */
  authorizeArgs (input: AuthorizeInput): string[] {
    const { urn, reference } = input
    const k = this.keys
    const limitKeys = input.limits.map((l) => k.limit(urn, input.last4, l))
    const controlKeys = this.controlKeys(urn, input.last4, input.controls, true)
    const deadlineAtMs = input.deadlineAtMs + this.clockOffsetMs
    const controls = input.controls?.defaults ?? []
    const stream = k.stream(urn)
    const args: string[] = [
      String(5 + limitKeys.length + controlKeys.length),
      k.customer(urn), k.cards(urn), k.decision(urn, reference), stream, ...limitKeys, ...controlKeys, refIndexOf(stream, reference),
      reference, urn, input.last4, String(input.debitAmount), input.fingerprint, input.attempt,
      String(input.nowMs), String(deadlineAtMs), String(Math.ceil(decisionTtlMs(this.retentionMs, input.limits) / 1000)), this.streamMaxLenArg,
      input.standIn === true ? 'standin' : input.decline === null ? '' : `${input.decline.code}|${input.decline.ruleId}`,
      this.compact ? recordRest({ urn, reference, last4: input.last4, debit: String(input.debitAmount) }, input.nowMs, deadlineAtMs, input.meta) : '',
      this.compact ? '' : JSON.stringify(input.meta),
      String(input.limits.length), CONTROL_DAILY_RETAIN_ARG, headOwnPart(input.attempt, input.fingerprint, input.nowMs),
      limitTails(input.limits), input.controls === undefined ? '[]' : dailyTails(controls, input.controls.day),
      eventOwnPart(input), input.holdExpiresAtMs === undefined ? '' : String(input.holdExpiresAtMs)
    ]
    for (const l of input.limits) args.push(`${l.mode}|${l.measure}|${l.windowStartMs}|${l.retainMs}|${l.max}|${l.code}|${l.ruleId}`)
    for (const d of controls) args.push(defaultArgs(d).join('|'))
    return args
  }

  async authorize (input: AuthorizeInput): Promise<AuthorizeResult> {
    assertAmount(input.debitAmount, 'debitAmount', { zero: true })
    const { urn } = input
    const args = this.authorizeArgs(input)
    const connection = this.connectionNow()
    const [code, reason, ruleId, replayed, available, shadow, hit] = await send(this.client, () => this.authorizeCall(args)) as [string, string, string, string, string, string[] | undefined, string | undefined]
    const control = hit !== undefined && hit !== '' ? controlHitOf(JSON.parse(hit)) : null
    if (replayed !== '1' && reason !== 'conflict') this.wrote(urn)
    if (code === '00' && this.waitReplicas > 0) {
      // Redis times a WAIT out on its own timer tick (up to 1/hz late, 100 ms by default): leave room for
      // the shortfall's reply to come back before the deadline guard answers in its place
      // a stand-in replay has no deadline: it waits as a compensation does
      const left = input.standIn === true ? this.abandonWaitMs : input.deadlineAtMs - Date.now()
      await this.confirmReplicated(connection, left - Math.min(WAIT_REPLY_RESERVE_MS, left / 4), 'approval')
    }
    return {
      ...(control !== null ? { control } : {}),
      code: code as ResponseCode,
      reason: reason as DecisionReason,
      ruleId: ruleId === '' ? null : ruleId,
      replayed: replayed === '1',
      available: available === '' ? null : Number(available),
      shadowLimitHits: Array.isArray(shadow) ? shadow : []
    }
  }

  async abandon (input: AbandonInput): Promise<AbandonOutcome> {
    const { urn, reference } = input
    const k = this.keys
    const limitKeys = input.limits.map((l) => k.limit(urn, input.last4, l))
    const controlKeys = this.controlKeys(urn, input.last4, input.controls, false)
    const connection = this.connectionNow()
    const out = await send(this.client, async () => await this.scripts.extauthAbandon(
      3 + limitKeys.length + controlKeys.length, k.customer(urn), k.decision(urn, reference), k.stream(urn), ...limitKeys, ...controlKeys,
      reference, urn, input.attempt, input.fingerprint, input.last4, String(input.arrivedAtMs),
      String(input.deadlineAtMs), this.retentionSeconds, this.streamMaxLenArg, input.tombstone === false ? '0' : '1',
      this.compact ? recordRest({ urn, reference, last4: input.last4, debit: '0' }, input.arrivedAtMs, input.deadlineAtMs, null) : ''))
    if (out !== 'untouched') this.wrote(urn)
    // A release acknowledged by the primary alone could vanish in a failover while the approval it undoes
    // survives on a replica: it counts as done only once replicated (else the compensator sends it again).
    if (this.waitReplicas > 0) await this.confirmReplicated(connection, this.abandonWaitMs, 'compensation')
    return out as AbandonOutcome
  }

  /** The socket commands go out on now (a plain client); a reconnection makes a new one. */
  private connectionNow (): unknown {
    return this.client instanceof Cluster ? null : this.client.stream
  }

  /**
   * WAIT for the replicas after a write. WAIT counts the writes of this connection, so it must go out on the
   * socket the write went on: after a reconnection (to a new primary, perhaps) a WAIT on the new socket
   * would count nothing of ours and answer at once. Anything short of a confirmation means the write may be
   * lost in a failover, not that it did not happen: ERR_STORE_NOT_REPLICATED (never "not done").
   */
  private async confirmReplicated (connection: unknown, timeoutMs: number, what: string): Promise<void> {
    const client = this.client as Redis
    if (timeoutMs < 1) throw new ERR_STORE_NOT_REPLICATED(`no time left to wait for the replicas of this ${what}`)
    if (client.stream !== connection || !writableNow(client)) throw new ERR_STORE_NOT_REPLICATED(`the connection changed before the ${what} was confirmed`)
    let acked: number
    try {
      acked = Number(await client.wait(this.waitReplicas, Math.floor(timeoutMs)))
    } catch (err) {
      throw new ERR_STORE_NOT_REPLICATED(`WAIT failed: ${(err as Error).message}`)
    }
    if (acked < this.waitReplicas) throw new ERR_STORE_NOT_REPLICATED(`${acked} of ${this.waitReplicas} replicas hold this ${what}`)
  }

  /** the keys of the card controls that apply: the card's own settings (authorize only), then each kind's daily total */
  private controlKeys (urn: string, last4: string, controls: ControlsInput | undefined, withSettings: boolean): string[] {
    if (controls === undefined || controls.defaults.length === 0) return []
    const daily = controls.defaults.map((d) => this.keys.controlDaily(urn, last4, d.kind, controls.day))
    return withSettings ? [this.keys.cardControls(urn, last4), ...daily] : daily
  }

  private async cardControls (urn: string, last4: string, patch: ControlEntries | null, audit?: AuditContext): Promise<{ before: ControlEntries, after: ControlEntries }> {
    const k = this.keys
    const pairs = patch === null ? [] : patchToFields(patch).flat()
    const out = await send(this.client, async () => await this.scripts.extauthCardControls(k.customer(urn), k.cards(urn), k.cardControls(urn, last4), k.stream(urn),
      last4, urn, String(this.streamMaxLen), ...this.auditArgs(audit), ...pairs)) as unknown[]
    if (out[0] !== 'OK') reject(String(out[0]) as StoreRejectionCode)
    if (pairs.length > 0) this.wrote(urn)
    return { before: entriesFromFields(pairsToObject(out[1])), after: entriesFromFields(pairsToObject(out[2])) }
  }

  async getCardControls (urn: string, last4: string): Promise<ControlEntries> {
    return (await this.cardControls(urn, last4, null)).after
  }

  async patchCardControls (urn: string, last4: string, patch: ControlEntries, audit?: AuditContext): Promise<{ before: ControlEntries, after: ControlEntries }> {
    return await this.cardControls(urn, last4, patch, audit)
  }

  async putCustomer (urn: string, patch: { customerId?: string, status?: CustomerStatus }, audit?: AuditContext): Promise<Customer> {
    await send(this.client, async () => await this.scripts.extauthPutCustomer(this.keys.customer(urn), this.keys.stream(urn), patch.status ?? '',
      patch.customerId === undefined ? '0' : '1', patch.customerId ?? '', urn, String(this.streamMaxLen), ...this.auditArgs(audit)))
    this.wrote(urn)
    return await this.mustGetCustomer(urn)
  }

  async putCard (urn: string, last4: string, status: CardStatus, audit?: AuditContext): Promise<Customer> {
    const out = await send(this.client, async () => await this.scripts.extauthPutCard(this.keys.customer(urn), this.keys.cards(urn), this.keys.stream(urn),
      last4, status, urn, String(this.streamMaxLen), ...this.auditArgs(audit)))
    if (out !== 'OK') reject(String(out) as StoreRejectionCode)
    this.wrote(urn)
    return await this.mustGetCustomer(urn)
  }

  private async mustGetCustomer (urn: string): Promise<Customer> {
    const c = await this.getCustomer(urn)
    if (c === null) reject('CUSTOMER_NOT_FOUND')
    return c
  }

  async getCustomer (urn: string): Promise<Customer | null> {
    const [cust, cards] = await Promise.all([
      this.client.hgetall(this.keys.customer(urn)),
      this.client.hgetall(this.keys.cards(urn))
    ])
    if (cust.status === undefined) return null
    return {
      urn,
      customerId: cust.customerId ?? null,
      status: cust.status as CustomerStatus,
      available: Number(cust.available ?? '0'),
      held: Number(cust.held ?? '0'),
      cards: cards as Record<string, CardStatus>
    }
  }

  private async moneyOp (kind: MoneyOpKind, urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    assertAmount(amount, kind, { zero: kind === 'note' })
    const k = this.keys
    const out = await send(this.client, async () => await this.scripts.extauthMoneyOp(k.customer(urn), k.moneyOp(urn, kind, reference), k.stream(urn),
      kind, String(amount), reference, urn, String(this.streamMaxLen), String(MAX_BALANCE), this.retentionSeconds,
      event?.type ?? '', event?.details !== undefined ? JSON.stringify(event.details) : '', ...this.auditArgs(audit))) as string[]
    if (out[0] === 'INSUFFICIENT_FUNDS') insufficientFunds(out[1] ?? 'less', amount)
    if (out[0] !== 'OK') reject(String(out[0]) as StoreRejectionCode)
    if (out[1] !== '1') this.wrote(urn)
    return { replayed: out[1] === '1', available: Number(out[2]) }
  }

  async credit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    return await this.moneyOp('credit', urn, amount, reference, event, audit)
  }

  async debit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    return await this.moneyOp('debit', urn, amount, reference, event, audit)
  }

  async appendAudit (record: Omit<AuditRecord, 'atMs'>): Promise<AuditRecord> {
    const urn = auditUrnOf(record)
    const atMs = Number(await send(this.client, async () => await this.scripts.extauthAudit(this.keys.stream(urn), String(this.streamMaxLen),
      JSON.stringify(record), this.auditKeepS, record.target.urn ?? '')))
    this.wrote(urn)
    return { ...record, atMs }
  }

  async recordCompletion (urn: string, reference: string, event: MoneyEvent): Promise<MoneyOpResult> {
    return await this.moneyOp('note', urn, 0, reference, event)
  }

  private wrote (urn: string): void {
    this.onEvent?.(bucketOf(urn))
  }

  async getDecision (urn: string, reference: string): Promise<DecisionRecord | null> {
    const key = this.keys.decision(urn, reference)
    const [raw, pttl] = await Promise.all([this.client.get(key), this.client.pttl(key)])
    if (raw === null) return null
    return { ...decodeRecord(key, raw), expiresAtMs: pttl >= 0 ? Date.now() + pttl : null }
  }

  async reverse (urn: string, reference: string, amount: number | null, audit?: AuditContext): Promise<ReversalResult> {
    if (amount !== null) assertAmount(amount, 'reversal amount')
    const k = this.keys
    // The script needs the decision's window keys declared; read them first. They never change to other
    // keys afterwards (a release only removes or re-adds entries in the same windows).
    const rec = await this.getDecision(urn, reference)
    if (rec === null) reject('DECISION_NOT_FOUND')
    const windowKeys = [...rec.limitEntries.map((e) => e[0]), ...rec.controlEntries.map((e) => e[0])]
    const out = await send(this.client, async () => await this.scripts.extauthReverse(3 + windowKeys.length, k.customer(urn), k.decision(urn, reference),
      k.stream(urn), ...windowKeys, amount === null ? '' : String(amount), this.streamMaxLenArg, ...this.auditArgs(audit), urn, reference, rec.last4)) as string[]
    if (out[0] === 'ALREADY_REVERSED') alreadyReversed(reference, (await this.getDecision(urn, reference))?.reversal ?? null)
    if (out[0] !== 'OK') reject(String(out[0]) as StoreRejectionCode)
    if (out[1] !== '1') this.wrote(urn)
    return { replayed: out[1] === '1', released: Number(out[2]), available: Number(out[3]) }
  }

  async readDecisionStream (urn: string, count = 10000): Promise<Array<Record<string, string>>> {
    const entries = await this.client.xrange(this.keys.stream(urn), '-', '+', 'COUNT', count)
    return entries.map(([id, fields]) => flatEvent(id, pairsToObject(fields)))
  }

  /**
   * Saves a record and adds it to its customers' indexes in one script. On a Cluster the record's key and the
   * customers' index keys are in different slots: the indexes are written once the record is saved, each in one
   * step, so that a save refused (its revision, or a record already there) indexes nothing and no customer's
   * page lists another's record. A process stopped between the two leaves the record out of its customers'
   * indexes until its next save (a record is saved again at each change of status).
   */
  private async saveLifecycle (kind: LifecycleKind, id: string, value: object, mode: 'cas' | 'nx' | 'set', expectedRev: number, expires: boolean): Promise<boolean> {
    const key = this.keys.lifecycle(kind, id)
    const indexes = lifecycleUrnsOf(value).map((u) => this.keys.lifecycleIndex(u))
    const args = [JSON.stringify(value), mode, expectedRev, expires ? LIFECYCLE_TTL_SECONDS : 0, `${kind}:${id}`, LIFECYCLE_INDEX_MAX, LIFECYCLE_TTL_SECONDS]
    if (this.client instanceof Cluster) {
      if (await this.client.eval(PUT_LIFECYCLE_LUA, 1, key, ...args) !== 1) return false
      for (const index of indexes) await this.client.eval(PUT_LIFECYCLE_LUA, 1, index, '', 'index', 0, 0, ...args.slice(4))
      return true
    }
    return await this.client.eval(PUT_LIFECYCLE_LUA, 1 + indexes.length, key, ...indexes, ...args) === 1
  }

  async createLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<{ created: boolean, value: T }> {
    if (await this.saveLifecycle(kind, id, value, 'nx', 0, true)) return { created: true, value }
    const existing = await this.getLifecycle<T>(kind, id)
    // expired between the two calls: try once more
    return existing === null ? await this.createLifecycle(kind, id, value) : { created: false, value: existing }
  }

  async getLifecycle<T extends object> (kind: LifecycleKind, id: string): Promise<T | null> {
    const raw = await this.client.get(this.keys.lifecycle(kind, id))
    return raw === null ? null : JSON.parse(raw) as T
  }

  async listLifecycle (urn: string, limit: number): Promise<LifecycleRef[]> {
    const flat = await this.client.zrevrange(this.keys.lifecycleIndex(urn), 0, limit - 1, 'WITHSCORES')
    const out: LifecycleRef[] = []
    for (let i = 0; i + 1 < flat.length; i += 2) out.push(lifecycleRefOf(flat[i] as string, Number(flat[i + 1])))
    return out
  }

  async putLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T, expectedRev?: number, expires = true): Promise<void> {
    // a plain write clears the ttl: a record not final is kept until a save makes it final
    if (expectedRev === undefined) {
      await this.saveLifecycle(kind, id, value, 'set', 0, expires)
      return
    }
    if (!await this.saveLifecycle(kind, id, value, 'cas', expectedRev, expires)) {
      throw new LifecycleStale(`${kind} ${id} changed since it was read`)
    }
  }

  async renewLifecycleLock (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    return await this.client.eval(RENEW_LIFECYCLE_LUA, 1, this.keys.lifecycleLock(kind, id), owner, ttlMs) === 1
  }

  async lockLifecycle (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    return await this.client.set(this.keys.lifecycleLock(kind, id), owner, 'PX', ttlMs, 'NX') === 'OK'
  }

  async unlockLifecycle (kind: LifecycleKind, id: string, owner: string): Promise<boolean> {
    return await this.client.eval(UNLOCK_LIFECYCLE_LUA, 1, this.keys.lifecycleLock(kind, id), owner) === 1
  }

  ready (): boolean {
    return this.client.status === 'ready'
  }

  async ping (): Promise<void> {
    if (this.client instanceof Cluster) {
      await Promise.all(this.client.nodes('master').map(async (n) => await n.ping()))
    } else {
      await this.client.ping()
    }
  }

  async close (): Promise<void> {
    if (this.offsetTimer !== null) clearInterval(this.offsetTimer)
    try {
      await this.client.quit()
    } catch {
      this.client.disconnect()
    }
  }
}
