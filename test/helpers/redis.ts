// Redis for tests: the machine's server on 127.0.0.1:6379 with a key prefix of the test's own (deleted
// afterwards), or a private redis-server on a free port for tests that pause, kill or restart it.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { RedisStore, createRedisClient, type RedisStoreOptions } from '../../src/store/redis.js'
import { deleteByPrefix } from '../../scripts/lib/redis-keys.js'
import { freePort } from '../../scripts/lib/free-port.js'

export { deleteByPrefix, freePort }

export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

interface Teardown { teardown: (fn: () => unknown) => void }

export function uniquePrefix (): string {
  return `extauth-test:${randomBytes(6).toString('hex')}:`
}

/** A RedisStore on the shared server with a fresh prefix; its keys are deleted at teardown. */
export async function sharedRedisStore (t: Teardown, url = SHARED_REDIS_URL, opts: Omit<RedisStoreOptions, 'prefix'> = {}): Promise<RedisStore> {
  const prefix = uniquePrefix()
  const store = new RedisStore(createRedisClient({ url }), { prefix, ...opts })
  await store.connect()
  t.teardown(async () => {
    await store.close()
    await deleteByPrefix(url, prefix)
  })
  return store
}

export interface PrivateRedis {
  port: number
  url: string
  proc: ChildProcess
  /** a plain client for admin commands (CLIENT PAUSE, DEBUG SLEEP) */
  admin: () => Promise<Redis>
  stop: () => Promise<void>
  restart: () => Promise<void>
}

async function waitForPing (url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    r.on('error', () => {})
    try {
      await r.connect()
      await r.ping()
      r.disconnect()
      return
    } catch {
      r.disconnect()
      if (Date.now() > until) throw new Error(`redis-server at ${url} did not start`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

export interface PrivateRedisOptions {
  /**
   * Keep the data across stop/restart: an append-only file fsynced on every write, in a temporary
   * directory of its own (deleted at teardown). Without it the server keeps nothing.
   */
  persist?: boolean
  /** more redis-server arguments (e.g. --rename-command) */
  args?: string[]
}

/** Starts redis-server on a free loopback port (no persistence unless asked); stopped at teardown. */
export async function privateRedis (t: Teardown, opts: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  let proc: ChildProcess
  const clients: Redis[] = []
  const dir = opts.persist === true ? await mkdtemp(join(tmpdir(), 'extauth-redis-')) : null
  const persistence = dir === null
    ? ['--appendonly', 'no']
    : ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir]
  const start = async (): Promise<void> => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--enable-debug-command', 'local', ...(opts.args ?? [])], { stdio: 'ignore' })
    await waitForPing(url, 5000)
  }
  const stop = async (): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGKILL')
    await exited
  }
  await start()
  const pr: PrivateRedis = {
    port,
    url,
    get proc () { return proc },
    admin: async () => {
      const c = new Redis(url, { maxRetriesPerRequest: 1 })
      c.on('error', () => {})
      clients.push(c)
      return c
    },
    stop,
    restart: async () => { await stop(); await start() }
  }
  t.teardown(async () => {
    for (const c of clients) c.disconnect()
    await stop()
    if (dir !== null) await rm(dir, { recursive: true, force: true })
  })
  return pr
}
