// build(t): the two apps as the server builds them, on a store of the test's choice, torn down at the end.
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildAdminApp, buildPublicApp, type AppDeps } from '../../src/app.js'
import { createLogger } from '../../src/logger.js'
import { createServices } from '../../src/services.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { testConfig } from './config.js'
import type { Config } from '../../src/config.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface Built {
  publicApp: FastifyInstance
  adminApp: FastifyInstance
  deps: AppDeps
  /** every log line written, parsed */
  logs: Array<Record<string, unknown>>
  /** every log line as written */
  rawLogs: string[]
}

export interface BuildOptions {
  env?: Record<string, string>
  store?: Store
  clock?: () => number
  logLevel?: string
  /** adjusts the loaded configuration before the services are built (e.g. adapter timeouts) */
  configure?: (config: Config) => void
}

export function logCapture (): { stream: Writable, logs: Array<Record<string, unknown>>, rawLogs: string[] } {
  const logs: Array<Record<string, unknown>> = []
  const rawLogs: string[] = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        rawLogs.push(line)
        logs.push(JSON.parse(line) as Record<string, unknown>)
      }
      cb()
    }
  })
  return { stream, logs, rawLogs }
}

export async function build (t: Teardown, opts: BuildOptions = {}): Promise<Built> {
  const config = testConfig({ LOG_LEVEL: opts.logLevel ?? 'info', ...opts.env })
  opts.configure?.(config)
  const { stream, logs, rawLogs } = logCapture()
  const logger = createLogger(config.logLevel, stream)
  const services = await createServices(config, logger, { store: opts.store ?? new MemoryStore() })
  const deps: AppDeps = { ...services, ...(opts.clock !== undefined ? { clock: opts.clock } : {}) }
  const publicApp = await buildPublicApp(deps)
  const adminApp = await buildAdminApp(deps)
  t.teardown(async () => {
    await publicApp.close()
    await adminApp.close()
    await services.close()
  })
  return { publicApp, adminApp, deps, logs, rawLogs }
}
