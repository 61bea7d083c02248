// Creates what the apps depend on from the configuration: the store (Redis, Redis Cluster or the embedded
// memory store), the rules, metrics and the deadline compensator.
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { AppDeps } from './app.js'
import type { Store } from './store/types.js'
import { MemoryStore } from './store/memory.js'
import { RedisStore, createRedisClient } from './store/redis.js'
import { RulesManager } from './rules/manager.js'
import { createMetrics, type Metrics } from './metrics.js'
import { Compensator } from './decision/compensator.js'
import { FileCompensationJournal, type CompensationJournal } from './decision/compensation-journal.js'
import { ConfigError } from './config.js'
import { redactingChild } from './logger.js'
import { createGatewayAdapter } from './adapters/gateway.js'
import { createRiskAdapter, RISK_DEFAULT_TIMEOUT_MS } from './adapters/risk.js'
import { createPrepaidAdapter } from './adapters/prepaid.js'
import { LoadService } from './lifecycle/loads.js'
import { TransferService } from './lifecycle/transfers.js'
import { PreAuthService } from './lifecycle/preauths.js'
import { riskLookupFrom } from './lifecycle/risk-lookup.js'

export interface Services extends AppDeps {
  rulesManager: RulesManager
  close: () => Promise<void>
}

export async function createStore (config: Config, log: Logger): Promise<Store> {
  if (config.redisUrl === '' && config.redisClusterNodes === undefined) {
    log.warn('no REDIS_URL: running on the embedded in-memory store; all state is lost on exit')
    return new MemoryStore({ retentionMs: config.decisionRetentionMs })
  }
  const client = createRedisClient({
    ...(config.redisUrl !== '' ? { url: config.redisUrl } : {}),
    ...(config.redisClusterNodes !== undefined ? { clusterNodes: config.redisClusterNodes } : {})
  })
  client.on('error', (err: Error) => { log.debug({ err: err.message }, 'redis connection error') })
  let wasReady = false
  client.on('ready', () => { wasReady = true; log.info('redis ready') })
  client.on('end', () => { if (wasReady) log.warn('redis connection ended') })
  client.on('reconnecting', () => { if (wasReady) { wasReady = false; log.warn('redis unreachable; reconnecting') } })
  const store = new RedisStore(client, { prefix: config.redisKeyPrefix, retentionMs: config.decisionRetentionMs })
  try {
    await store.connect()
  } catch (err) {
    // start anyway, not ready; the client keeps reconnecting and readiness follows it
    log.error({ err: (err as Error).message }, 'redis unreachable at start; not ready until it answers')
  }
  return store
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
  const store = opts.store ?? await createStore(config, log)
  const metrics = opts.metrics ?? createMetrics()
  const rulesManager = new RulesManager({ dir: config.rulesDir, timezone: config.timezone, log })
  await rulesManager.start()
  if (config.rulesWatch) rulesManager.watch()
  const compensator = new Compensator(store, log, metrics, { ...journalFor(config, store) })
  compensator.recover()
  const lifecycle = { shuttingDown: false }
  const a = config.adapters
  const gateway = a.gateway !== undefined ? createGatewayAdapter(a.gateway, { logger: redactingChild(log, { party: 'gateway' }) }) : undefined
  const risk = a.risk !== undefined ? createRiskAdapter(a.risk, { logger: redactingChild(log, { party: 'risk' }) }) : undefined
  const prepaid = a.prepaid !== undefined ? createPrepaidAdapter(a.prepaid, { logger: redactingChild(log, { party: 'prepaid' }) }) : undefined
  return {
    config,
    store,
    metrics,
    logger: log,
    compensator,
    lifecycle,
    rulesManager,
    cardLifecycle: {
      ...(gateway !== undefined ? { loads: new LoadService(store, gateway), preauths: new PreAuthService(store, gateway) } : {}),
      ...(prepaid !== undefined ? { transfers: new TransferService(store, prepaid) } : {}),
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
