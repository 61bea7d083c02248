// Starts and stops the process: configuration, the two listeners, SIGHUP for a rules reload, and a
// graceful SIGTERM (stop accepting, answer what is in flight, close the store, exit 0).
import closeWithGrace from 'close-with-grace'
import { loadConfig, ConfigError } from './config.js'
import { createLogger, logWritten } from './logger.js'
import { buildAdminApp, buildPublicApp } from './app.js'
import { createServices } from './services.js'
import { RedisStore } from './store/redis.js'

async function main (): Promise<void> {
  let config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      // one line per bad variable, all of them
      for (const p of err.problems) process.stderr.write(`extauth: configuration error: ${p.variable}: ${p.message}\n`)
      process.exit(1)
    }
    throw err
  }
  const log = createLogger(config.logLevel)
  let services
  try {
    services = await createServices(config, log)
  } catch (err) {
    const e = err as Error & { errors?: unknown }
    log.fatal({ err: e.message, errors: e.errors }, 'cannot start')
    process.exit(1)
  }
  const publicApp = await buildPublicApp(services)
  const adminApp = config.adminKeys.size === 0 ? null : await buildAdminApp(services)

  process.on('SIGHUP', () => {
    log.info('SIGHUP: reloading rules')
    services.rulesManager.reload().catch((err: unknown) => { log.error({ err }, 'rules reload failed') })
    if (config.adminKeysFile === '') return
    // like the rules: a bad file keeps the keys in use
    const keys = config.adminKeys.reload()
    if (keys.ok) log.info({ keys: keys.keys }, 'SIGHUP: admin keys reloaded')
    else log.error({ err: keys.error }, 'admin keys reload refused; the keys in use stay')
  })

  // SIGHUP reloads (above): close-with-grace would otherwise take it as a signal to stop
  closeWithGrace({ delay: config.graceMs, skip: ['SIGHUP'] }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'closing after an error')
    log.info({ signal }, 'shutting down: finishing requests in flight')
    services.shutdown.started = true
    await publicApp.close()
    // compensations first: a slow card-lifecycle call on the admin listener must not use up the grace
    // period they need (what is still pending at the end is logged for a person to reverse)
    const drained = services.compensator.drain(Math.min(config.graceMs, 5000))
    if (adminApp !== null) await adminApp.close()
    await drained
    await services.close()
    // the last line, when the process exits: close-with-grace exits right after this, and pino writes
    // what it still holds (this one line) on the way out
    await logWritten(log)
    log.info('stopped')
  })

  await publicApp.listen({ host: config.host, port: config.port })
  if (adminApp === null) {
    log.warn('neither ADMIN_TOKEN nor ADMIN_KEYS_FILE is set: the admin listener (admin API, card lifecycle, metrics) is not started')
  } else {
    await adminApp.listen({ host: config.adminHost, port: config.adminPort })
  }
  // on Redis, how decisions reach it: as a Redis function, or as a script where Redis will not run one
  // (docs/operations/runbook.md, The decision's Redis function); read when the line is written
  const store = services.store
  const readyLine = (): Record<string, unknown> => ({
    store: store.kind,
    ...(store instanceof RedisStore ? { redisFunctions: store.usesFunctions } : {}),
    rules: services.rulesManager.current.version,
    deadlineMs: config.deadlineMs
  })
  if (services.store.ready()) {
    log.info(readyLine(), 'extauth ready')
  } else {
    // listening (liveness answers, readiness says 503) but not ready: say so, and say "ready" only when it is
    const p = services.storeStatus.problem()
    log.warn({ ...readyLine(), ...p }, `extauth listening, not ready: redis ${p?.redis ?? ''} unreachable: ${p?.cause ?? ''}`)
    services.storeStatus.ready.then(() => { log.info(readyLine(), 'extauth ready') }, () => {})
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`extauth: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
