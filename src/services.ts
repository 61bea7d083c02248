// Creates what the apps depend on from the configuration: the store (Redis, Redis Cluster or the embedded
// memory store), the rules, metrics and the deadline compensator.
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { AppDeps } from './app.js'
import type { Store } from './store/types.js'
import { MemoryStore } from './store/memory.js'
import { RedisStore, createRedisClient } from './store/redis.js'
import { RulesManager } from './rules/manager.js'
import { createMetrics, noteAdapterCalls, noteRuleSet, observeAdapterCall, watchHealth, type Metrics } from './metrics.js'
import { ADAPTER_CALLS, type AdapterCall, createGatewayAdapter, createPrepaidAdapter, createRiskAdapter, RISK_DEFAULT_TIMEOUT_MS } from './adapters/index.js'
import { Compensator } from './decision/compensator.js'
import { FileCompensationJournal, type CompensationJournal } from './decision/compensation-journal.js'
import { ConfigError } from './config.js'
import { EMBEDDED_STORE_STATUS, redisTarget, watchRedisStatus, type StoreStatus } from './store-status.js'
import { redactingChild } from './logger.js'
import { LoadService } from './moves/loads.js'
import { TransferService } from './moves/transfers.js'
import { UnloadService } from './moves/unloads.js'
import { PreAuthService } from './moves/preauths.js'
import { riskLookupFrom } from './decision/risk-lookup.js'
import { startEvents } from './events/start.js'
import { StandIn } from './standin/stand-in.js'
import { FileStandInJournal, MemoryStandInJournal, type StandInJournal } from './standin/journal.js'
import { standInMetrics } from './standin/metrics.js'
import { logNegativeBalance } from './standin/negative-balance.js'
import { settlementFor } from './settlement/for-store.js'
import { settlementMetrics } from './settlement/metrics.js'
import { expiryIntervalMs, startExpiry } from './settlement/expiry.js'
import { lifecycleFailedHook } from './settlement/lifecycle-failed.js'
import { queueStandInNegativeBalance, queueStandInUnconfirmed } from './settlement/standin-exception.js'
import type { SettlementStore } from './settlement/types.js'

export interface Services extends AppDeps {
  rulesManager: RulesManager
  /** why the store does not answer, and when it first does (server.ts logs "extauth ready" then) */
  storeStatus: StoreStatus
  close: () => Promise<void>
}

export async function createStore (config: Config, log: Logger): Promise<{ store: Store, status: StoreStatus }> {
  if (config.redisUrl === '' && config.redisClusterNodes === undefined && config.redisSentinels === undefined) {
    // config.ts refuses any Redis setting without a Redis to use, so this is a deliberate choice
    log.warn('no REDIS_URL: running on the embedded in-memory store; all state is lost on exit')
    return { store: new MemoryStore({ retentionMs: config.decisionRetentionMs, auditRetentionMs: config.auditRetentionMs, ...(config.eventsBacklogMax !== undefined ? { backlogMax: config.eventsBacklogMax } : {}) }), status: EMBEDDED_STORE_STATUS }
  }
  const client = createRedisClient({
    ...(config.redisUrl !== '' ? { url: config.redisUrl } : {}),
    ...(config.redisClusterNodes !== undefined ? { clusterNodes: config.redisClusterNodes } : {}),
    ...(config.redisSentinels !== undefined ? { sentinels: config.redisSentinels, sentinelName: config.redisSentinelName } : {})
  })
  const target = redisTarget(config.redisUrl, config.redisClusterNodes)
  client.on('error', (err: Error) => { log.debug({ err: err.message }, 'redis connection error') })
  const store = new RedisStore(client, { prefix: config.redisKeyPrefix, retentionMs: config.decisionRetentionMs, auditRetentionMs: config.auditRetentionMs, waitReplicas: config.redisWaitReplicas, recordFormat: config.decisionRecordFormat, ...(config.eventsBacklogMax !== undefined ? { backlogMax: config.eventsBacklogMax } : {}) })
  const status = watchRedisStatus(client, target, () => store.ready())
  let wasReady = false
  client.on('ready', () => {
    wasReady = true
    // behind Sentinel the primary may have moved: say where this connection went
    const stream = 'stream' in client ? client.stream : undefined
    log.info({ redis: target, primary: stream?.remoteAddress !== undefined ? `${stream.remoteAddress}:${String(stream.remotePort)}` : undefined }, 'redis ready')
  })
  client.on('end', () => { if (wasReady) log.warn({ redis: target }, 'redis connection ended') })
  client.on('reconnecting', () => {
    if (!wasReady) return
    wasReady = false
    const p = status.problem()
    log.warn({ ...p }, `redis unreachable at ${p?.redis ?? target}: ${p?.cause ?? 'connection lost'}; reconnecting`)
  })
  try {
    // behind Sentinel, a first connection keeps retrying while no Sentinel answers: start anyway, not ready
    let timer: NodeJS.Timeout | undefined
    const startTimeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error('no answer within 5 s')) }, 5000)
    })
    await Promise.race([store.connect(), startTimeout]).finally(() => { clearTimeout(timer) })
    if (config.redisWaitReplicas > 0) await warnOnTooFewReplicas(client, config.redisWaitReplicas, log)
  } catch (err) {
    // start anyway, not ready; the client keeps reconnecting and readiness follows it
    const p = status.problem() ?? { redis: target, cause: (err as Error).message }
    log.error({ ...p, err: (err as Error).message }, `redis unreachable at ${p.redis}: ${p.cause}; not ready until it answers`)
  }
  return { store, status }
}

/** With fewer replicas than REDIS_WAIT_REPLICAS every approval is declined: say so at start, not per request. */
async function warnOnTooFewReplicas (client: ReturnType<typeof createRedisClient>, wanted: number, log: Logger): Promise<void> {
  if (!('stream' in client)) return
  const info = await client.info('replication').catch(() => '')
  const connected = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? NaN)
  if (connected < wanted) {
    log.warn({ connected, wanted }, 'fewer replicas connected than REDIS_WAIT_REPLICAS: approvals are answered 05 until enough replicas confirm them')
  }
}

/** The store a journal on disk belongs to: the same Redis however reached, and the key prefix. */
function storeIdentity (config: Config): string {
  const nodes = config.redisClusterNodes ?? config.redisSentinels
  // a Sentinel deployment is named by its Sentinels and primary name
  const target = nodes !== undefined
    ? nodes.map((n) => `${n.host}:${n.port}`).join(',') + (config.redisSentinels !== undefined ? `/${config.redisSentinelName}` : '')
    : config.redisUrl
  return `${target}|${config.redisKeyPrefix}`
}

/** A journal on disk for Redis; the embedded store's state dies with the process, and so may its journal. */
function journalFor (config: Config, store: Store): { journal?: CompensationJournal } {
  if (store.kind === 'memory' || config.compensationJournalDir === '') return {}
  try {
    return { journal: new FileCompensationJournal(config.compensationJournalDir, storeIdentity(config)) }
  } catch (err) {
    throw new ConfigError('COMPENSATION_JOURNAL_DIR', `cannot use ${config.compensationJournalDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}

/** Stand-in, when STANDIN_POLICY_FILE is set: its journal on disk (in memory for the embedded store). */
function standInFor (config: Config, store: Store, settlement: SettlementStore, metrics: Metrics, log: Logger): StandIn | undefined {
  if (config.standIn === undefined) return undefined
  let journal: StandInJournal
  try {
    journal = store.kind === 'memory' ? new MemoryStandInJournal() : new FileStandInJournal(config.standIn.journalDir, storeIdentity(config))
  } catch (err) {
    throw new ConfigError('STANDIN_JOURNAL_DIR', `cannot use ${config.standIn.journalDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  return new StandIn({
    policy: config.standIn.policy, journal, store, log, metrics: standInMetrics(metrics.registry),
    onNegativeBalance: logNegativeBalance(log), queueNegativeBalance: queueStandInNegativeBalance(settlement), queueUnconfirmed: queueStandInUnconfirmed(settlement)
  })
}

export async function createServices (config: Config, log: Logger, opts: { store?: Store, metrics?: Metrics } = {}): Promise<Services> {
  const created = opts.store !== undefined ? { store: opts.store, status: EMBEDDED_STORE_STATUS } : await createStore(config, log)
  const store = created.store
  const storeStatus = created.status
  const metrics = opts.metrics ?? createMetrics()
  metrics.deadlineSeconds.set(config.deadlineMs / 1000)
  const rulesManager = new RulesManager({
    dir: config.rulesDir,
    timezone: config.timezone,
    log,
    onLoaded: (set, loadedAtMs) => { noteRuleSet(metrics, { version: set.version, loadedAtMs, rules: set.rules }) },
    onRefused: () => { metrics.rulesReloadFailures.inc() }
  })
  await rulesManager.start()
  if (config.rulesWatch) rulesManager.watch()
  const compensator = new Compensator(store, log, metrics, { ...journalFor(config, store) })
  const settlement = settlementFor(store, { ...(config.eventsBacklogMax !== undefined ? { backlogMax: config.eventsBacklogMax } : {}), auditRetentionMs: config.auditRetentionMs })
  const standIn = standInFor(config, store, settlement, metrics, log)
  const events = startEvents(config, store, metrics, log)
  compensator.recover()
  standIn?.start()
  // every instance expires due holds (a hold expires once whichever runs it); also after a switch back to final
  const holdsExpired = settlementMetrics(metrics.registry, () => settlement).holdsExpired
  let expiryWarnedAt = 0
  const expiry = startExpiry(settlement, {
    intervalMs: expiryIntervalMs(config.settlement?.holdExpiryMs),
    ready: () => store.ready(),
    onExpired: (n) => { holdsExpired.inc(n); log.info({ expired: n }, 'authorization holds expired') },
    onError: (err) => {
      // once a minute at most: the next run tries again
      if (Date.now() - expiryWarnedAt < 60_000) return
      expiryWarnedAt = Date.now()
      log.warn({ err: err.message }, 'hold expiry failed; the next run tries again')
    }
  })
  const shutdown = { started: false }
  watchHealth(metrics, {
    ...(store.kind === 'redis' ? { redisUp: () => store.ready() } : {}),
    ready: () => (store.ready() || standIn?.canDecide === true) && rulesManager.loadedAt !== null && !shutdown.started
  })
  const a = config.adapters
  const onCall = (c: AdapterCall): void => { observeAdapterCall(metrics, c) }
  const adapterDeps = (party: keyof typeof ADAPTER_CALLS): { logger: Logger, onCall: typeof onCall } => {
    noteAdapterCalls(metrics, party, ADAPTER_CALLS[party])
    return { logger: redactingChild(log, { party }), onCall }
  }
  const gateway = a.gateway !== undefined ? createGatewayAdapter(a.gateway, adapterDeps('gateway')) : undefined
  const risk = a.risk !== undefined ? createRiskAdapter(a.risk, adapterDeps('risk')) : undefined
  const prepaid = a.prepaid !== undefined ? createPrepaidAdapter(a.prepaid, adapterDeps('prepaid')) : undefined
  const onFailed = lifecycleFailedHook(settlement, log)
  return {
    config,
    store,
    metrics,
    logger: log,
    compensator,
    shutdown,
    rulesManager,
    storeStatus,
    storeProblem: storeStatus.problem,
    ...(standIn !== undefined ? { standIn } : {}),
    ...(events !== undefined ? { events: events.relay } : {}),
    cardLifecycle: {
      ...(gateway !== undefined ? { loads: new LoadService(store, gateway, Date.now, a.lifecycleLockTtlMs, onFailed), preauths: new PreAuthService(store, gateway, Date.now, a.lifecycleLockTtlMs) } : {}),
      ...(prepaid !== undefined ? { transfers: new TransferService(store, prepaid, Date.now, a.lifecycleLockTtlMs, onFailed) } : {}),
      ...(prepaid?.unloads === true ? { unloads: new UnloadService(store, prepaid, Date.now, a.lifecycleLockTtlMs, onFailed) } : {}),
      ...(risk !== undefined ? { risk } : {})
    },
    ...(risk !== undefined ? { risk: riskLookupFrom(risk, a.risk?.timeoutMs ?? RISK_DEFAULT_TIMEOUT_MS) } : {}),
    rules: {
      current: () => rulesManager.current,
      reload: async () => await rulesManager.reload(),
      loadedAt: () => rulesManager.loadedAt
    },
    close: async () => {
      expiry.stop()
      rulesManager.close()
      await compensator.drain(Math.min(config.graceMs, 5000))
      await standIn?.stop()
      await events?.stop()
      await store.close()
      await Promise.all([gateway?.close(), risk?.close(), prepaid?.close()])
    }
  }
}
