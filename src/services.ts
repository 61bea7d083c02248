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
import { ADAPTER_CALLS, type AdapterCall } from './adapters/options.js'
import { Compensator } from './decision/compensator.js'
import { FileCompensationJournal, type CompensationJournal } from './decision/compensation-journal.js'
import { ConfigError } from './config.js'
import { EMBEDDED_STORE_STATUS, redisTarget, watchRedisStatus, type StoreStatus } from './store-status.js'
import { redactingChild } from './logger.js'
import { createGatewayAdapter } from './adapters/gateway.js'
import { createRiskAdapter, RISK_DEFAULT_TIMEOUT_MS } from './adapters/risk.js'
import { createPrepaidAdapter } from './adapters/prepaid.js'
import { LoadService } from './lifecycle/loads.js'
import { TransferService } from './lifecycle/transfers.js'
import { UnloadService } from './lifecycle/unloads.js'
import { PreAuthService } from './lifecycle/preauths.js'
import { riskLookupFrom } from './lifecycle/risk-lookup.js'

export interface Services extends AppDeps {
  rulesManager: RulesManager
  /** why the store does not answer, and when it first does (server.ts logs "extauth ready" then) */
  storeStatus: StoreStatus
  close: () => Promise<void>
}

export async function createStore (config: Config, log: Logger): Promise<{ store: Store, status: StoreStatus }> {
  if (config.redisUrl === '' && config.redisClusterNodes === undefined) {
    log.warn('no REDIS_URL: running on the embedded in-memory store; all state is lost on exit')
    return { store: new MemoryStore({ retentionMs: config.decisionRetentionMs }), status: EMBEDDED_STORE_STATUS }
  }
  const client = createRedisClient({
    ...(config.redisUrl !== '' ? { url: config.redisUrl } : {}),
    ...(config.redisClusterNodes !== undefined ? { clusterNodes: config.redisClusterNodes } : {})
  })
  const target = redisTarget(config.redisUrl, config.redisClusterNodes)
  client.on('error', (err: Error) => { log.debug({ err: err.message }, 'redis connection error') })
  const store = new RedisStore(client, { prefix: config.redisKeyPrefix, retentionMs: config.decisionRetentionMs })
  const status = watchRedisStatus(client, target, () => store.ready())
  let wasReady = false
  client.on('ready', () => { wasReady = true; log.info({ redis: target }, 'redis ready') })
  client.on('end', () => { if (wasReady) log.warn({ redis: target }, 'redis connection ended') })
  client.on('reconnecting', () => {
    if (!wasReady) return
    wasReady = false
    const p = status.problem()
    log.warn({ ...p }, `redis unreachable at ${p?.redis ?? target}: ${p?.cause ?? 'connection lost'}; reconnecting`)
  })
  try {
    await store.connect()
  } catch (err) {
    // start anyway, not ready; the client keeps reconnecting and readiness follows it
    const p = status.problem() ?? { redis: target, cause: (err as Error).message }
    log.error({ ...p, err: (err as Error).message }, `redis unreachable at ${p.redis}: ${p.cause}; not ready until it answers`)
  }
  return { store, status }
}

/** A journal on disk for Redis; the embedded store's state dies with the process, and so may its journal. */
function journalFor (config: Config, store: Store): { journal?: CompensationJournal } {
  if (store.kind === 'memory' || config.compensationJournalDir === '') return {}
  const target = config.redisClusterNodes?.map((n) => `${n.host}:${n.port}`).join(',') ?? config.redisUrl
  try {
    return { journal: new FileCompensationJournal(config.compensationJournalDir, `${target}|${config.redisKeyPrefix}`) }
  } catch (err) {
    throw new ConfigError('COMPENSATION_JOURNAL_DIR', `cannot use ${config.compensationJournalDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
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
  compensator.recover()
  const lifecycle = { shuttingDown: false }
  watchHealth(metrics, {
    ...(store.kind === 'redis' ? { redisUp: () => store.ready() } : {}),
    ready: () => store.ready() && rulesManager.loadedAt !== null && !lifecycle.shuttingDown
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
  return {
    config,
    store,
    metrics,
    logger: log,
    compensator,
    lifecycle,
    rulesManager,
    storeStatus,
    storeProblem: storeStatus.problem,
    cardLifecycle: {
      ...(gateway !== undefined ? { loads: new LoadService(store, gateway, Date.now, a.lifecycleLockTtlMs), preauths: new PreAuthService(store, gateway, Date.now, a.lifecycleLockTtlMs) } : {}),
      ...(prepaid !== undefined ? { transfers: new TransferService(store, prepaid, Date.now, a.lifecycleLockTtlMs) } : {}),
      ...(prepaid?.unloads === true ? { unloads: new UnloadService(store, prepaid, Date.now, a.lifecycleLockTtlMs) } : {}),
      ...(risk !== undefined ? { risk } : {})
    },
    ...(risk !== undefined ? { risk: riskLookupFrom(risk, a.risk?.timeoutMs ?? RISK_DEFAULT_TIMEOUT_MS) } : {}),
    rules: {
      current: () => rulesManager.current,
      reload: async () => await rulesManager.reload(),
      loadedAt: () => rulesManager.loadedAt
    },
    close: async () => {
      rulesManager.close()
      await compensator.drain(Math.min(config.graceMs, 5000))
      await store.close()
      await Promise.all([gateway?.close(), risk?.close(), prepaid?.close()])
    }
  }
}
