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
  if (config.redisUrl === '' && config.redisClusterNodes === undefined && config.redisSentinels === undefined) {
    // config.ts refuses any Redis setting without a Redis to use, so this is a deliberate choice
    log.warn('no REDIS_URL: running on the embedded in-memory store; all state is lost on exit')
    return new MemoryStore({ retentionMs: config.decisionRetentionMs })
  }
  const client = createRedisClient({
    ...(config.redisUrl !== '' ? { url: config.redisUrl } : {}),
    ...(config.redisClusterNodes !== undefined ? { clusterNodes: config.redisClusterNodes } : {}),
    ...(config.redisSentinels !== undefined ? { sentinels: config.redisSentinels, sentinelName: config.redisSentinelName } : {})
  })
  client.on('error', (err: Error) => { log.debug({ err: err.message }, 'redis connection error') })
  let wasReady = false
  client.on('ready', () => {
    wasReady = true
    // behind Sentinel the primary may have moved: say where this connection went
    const stream = 'stream' in client ? client.stream : undefined
    log.info({ primary: stream?.remoteAddress !== undefined ? `${stream.remoteAddress}:${String(stream.remotePort)}` : undefined }, 'redis ready')
  })
  client.on('end', () => { if (wasReady) log.warn('redis connection ended') })
  client.on('reconnecting', () => { if (wasReady) { wasReady = false; log.warn('redis unreachable; reconnecting') } })
  const store = new RedisStore(client, { prefix: config.redisKeyPrefix, retentionMs: config.decisionRetentionMs, waitReplicas: config.redisWaitReplicas })
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
    log.error({ err: (err as Error).message }, 'redis unreachable at start; not ready until it answers')
  }
  return store
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

/** A journal on disk for Redis; the embedded store's state dies with the process, and so may its journal. */
function journalFor (config: Config, store: Store): { journal?: CompensationJournal } {
  if (store.kind === 'memory' || config.compensationJournalDir === '') return {}
  const nodes = config.redisClusterNodes ?? config.redisSentinels
  // the same Redis however reached: a Sentinel deployment is named by its Sentinels and primary name
  const target = nodes !== undefined
    ? nodes.map((n) => `${n.host}:${n.port}`).join(',') + (config.redisSentinels !== undefined ? `/${config.redisSentinelName}` : '')
    : config.redisUrl
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
