// Runs extauth (`npm start`'s command: node --import tsx src/server.ts, or built JavaScript) as a child process
// on free ports with generated caller keys, on the embedded store or on a Redis with a prefix of its own.
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './free-port.js'
import { startChild, waitUntilReady, type Child } from './child.js'
import type { PlatformKeys } from '../../k6/scenario.js'

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The settings a spawned extauth takes from the caller's environment (the rest are the spawn's own):
 * `npm run load -- --spawn`, `npm run bench` and `npm run bench:scale` pass them on (SHED_EVENT_LOOP_DELAY_MS=0:
 * no shedding, for a run that counts answers on a busy machine). */
const SPAWN_PASSED = ['DECISION_DEADLINE_MS', 'SHED_EVENT_LOOP_DELAY_MS'] as const

export function spawnEnv (env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of SPAWN_PASSED) {
    const value = env[name]
    if (value !== undefined) out[name] = value
  }
  return out
}

export interface SpawnedExtauth {
  child: Child
  baseUrl: string
  adminUrl: string
  adminToken: string
  keys: PlatformKeys
  /** set when the store is Redis */
  redis?: { url: string, prefix: string }
}

export interface SpawnOptions {
  redisUrl?: string
  redisPrefix?: string
  logLevel?: string
  /** more environment (DECISION_DEADLINE_MS, RULES_DIR, ...) */
  env?: Record<string, string>
  name?: string
  /** the caller headers extauth expects; generated when absent */
  keys?: PlatformKeys
  /** the built server to run (e.g. dist/server.js), as production does; without: the sources through tsx */
  script?: string
  /** a command that execs node (`['taskset', '-c', '3']`): see startChild */
  wrap?: string[]
}

export async function spawnExtauth (opts: SpawnOptions = {}): Promise<SpawnedExtauth> {
  const [port, adminPort] = [await freePort(), await freePort()]
  const keys: PlatformKeys = opts.keys ?? { consumerKey: `load-${randomBytes(6).toString('hex')}`, clientId: 'load-client', bankId: '1234' }
  const adminToken = randomBytes(16).toString('hex')
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    EXTAUTH_CONSUMER_KEY: keys.consumerKey,
    EXTAUTH_CLIENT_ID: keys.clientId,
    EXTAUTH_BANK_ID: keys.bankId,
    ADMIN_TOKEN: adminToken,
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_HOST: '127.0.0.1',
    ADMIN_PORT: String(adminPort),
    RULES_DIR: join(REPO_ROOT, 'rules'),
    LOG_LEVEL: opts.logLevel ?? 'info',
    ...(opts.redisUrl !== undefined ? { REDIS_URL: opts.redisUrl, REDIS_KEY_PREFIX: opts.redisPrefix ?? `extauth-load:${randomBytes(6).toString('hex')}:` } : {}),
    ...opts.env
  }
  const logFile = join(tmpdir(), `${opts.name ?? 'extauth'}-${process.pid}-${port}.log`)
  const args = opts.script !== undefined ? [opts.script] : ['--import', 'tsx', join(REPO_ROOT, 'src/server.ts')]
  const child = startChild(args, { env, cwd: REPO_ROOT, logFile, ...(opts.wrap !== undefined ? { wrap: opts.wrap } : {}) })
  const baseUrl = `http://127.0.0.1:${port}`
  try {
    await waitUntilReady(child, `${baseUrl}/health/ready`)
  } catch (err) {
    await child.stop(2000)
    throw err
  }
  return {
    child,
    baseUrl,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    adminToken,
    keys,
    ...(env.REDIS_URL !== undefined ? { redis: { url: env.REDIS_URL, prefix: env.REDIS_KEY_PREFIX as string } } : {})
  }
}
