// A replicated Redis behind Sentinel for failover tests: one primary, its replicas and three Sentinels, each a
// redis-server of its own on a free loopback port, configured from files in a temporary directory (Sentinel
// rewrites its file), all stopped and deleted at teardown. Detection and failover are tuned down to about a
// second so a test can kill the primary and see the promotion within its time bound.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './redis.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export const SENTINEL_NAME = 'extauth-primary'

export interface SentinelOptions {
  replicas?: number
  /** Sentinel's down-after-milliseconds: how long the primary must be silent to be taken as down */
  downAfterMs?: number
  failoverTimeoutMs?: number
}

export interface RedisNode { port: number, proc: ChildProcess }

export interface SentinelSetup {
  name: string
  primary: RedisNode
  replicas: RedisNode[]
  sentinels: RedisNode[]
  /** REDIS_SENTINELS for extauth */
  sentinelsEnv: string
  /** a plain client to a node, for reading state (disconnected at teardown) */
  client: (port: number) => Redis
  /** the primary's port as the Sentinels report it now */
  primaryPortNow: () => Promise<number>
  /** SIGKILL, resolved once the process has exited */
  kill: (node: RedisNode) => Promise<void>
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

async function until<T> (what: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const t0 = Date.now()
  for (;;) {
    try {
      const v = await probe()
      if (v !== null) return v
    } catch {}
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(50)
  }
}

function infoField (info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim()
}

export interface Replicated {
  primary: RedisNode
  replicas: RedisNode[]
  client: (port: number) => Redis
  kill: (node: RedisNode) => Promise<void>
  /** the directory of the nodes' files (deleted at teardown) */
  dir: string
  start: (args: string[]) => ChildProcess
}

/** A primary and its replicas, in sync; everything stopped at teardown. */
export async function replicatedRedis (t: Teardown, replicaCount = 1): Promise<Replicated> {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-sentinel-'))
  const procs: ChildProcess[] = []
  const clients = new Map<number, Redis>()

  const start = (args: string[]): ChildProcess => {
    const p = spawn('redis-server', args, { stdio: 'ignore' })
    procs.push(p)
    return p
  }
  const kill = async (node: RedisNode): Promise<void> => {
    const p = node.proc
    if (p.exitCode !== null || p.signalCode !== null) return
    const exited = new Promise((resolve) => p.once('exit', resolve))
    p.kill('SIGKILL')
    await exited
  }
  const client = (port: number): Redis => {
    const known = clients.get(port)
    if (known !== undefined) return known
    // reconnects: the node may not listen yet, or may be the one a test killed
    const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0, retryStrategy: () => 50 })
    c.on('error', () => {})
    clients.set(port, c)
    return c
  }
  t.teardown(async () => {
    for (const c of clients.values()) c.disconnect()
    await Promise.all(procs.map(async (p) => {
      if (p.exitCode !== null || p.signalCode !== null) return
      const exited = new Promise((resolve) => p.once('exit', resolve))
      p.kill('SIGKILL')
      await exited
    }))
    await rm(dir, { recursive: true, force: true })
  })

  // --dir: a replica's full sync writes the primary's snapshot to disk even without --save
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
  const primaryPort = await freePort()
  const primary: RedisNode = { port: primaryPort, proc: start(['--port', String(primaryPort), ...common]) }
  const replicas: RedisNode[] = []
  for (let i = 0; i < replicaCount; i++) {
    const port = await freePort()
    replicas.push({ port, proc: start(['--port', String(port), ...common, '--replicaof', '127.0.0.1', String(primaryPort)]) })
  }
  for (const r of replicas) {
    const c = client(r.port)
    await until(`replica ${r.port} in sync`, async () => infoField(await c.info('replication'), 'master_link_status') === 'up' ? true : null, 10_000)
  }

  return { primary, replicas, client, kill, dir, start }
}

export async function sentinelSetup (t: Teardown, opts: SentinelOptions = {}): Promise<SentinelSetup> {
  const { primary, replicas, client, kill, dir, start } = await replicatedRedis(t, opts.replicas ?? 1)
  const primaryPort = primary.port
  const downAfterMs = opts.downAfterMs ?? 500
  const failoverTimeoutMs = opts.failoverTimeoutMs ?? 3000
  const sentinels: RedisNode[] = []
  for (let i = 0; i < 3; i++) {
    const port = await freePort()
    const file = join(dir, `sentinel-${i}.conf`)
    await writeFile(file, [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primaryPort} 2`,
      `sentinel down-after-milliseconds ${SENTINEL_NAME} ${downAfterMs}`,
      `sentinel failover-timeout ${SENTINEL_NAME} ${failoverTimeoutMs}`,
      `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
      ''
    ].join('\n'))
    sentinels.push({ port, proc: start([file, '--sentinel']) })
  }
  // each Sentinel must know the replicas and the two other Sentinels, or it cannot vote or promote
  for (const s of sentinels) {
    const c = client(s.port)
    await until(`sentinel ${s.port} sees the replicas and the other sentinels`, async () => {
      const m = await c.call('SENTINEL', 'MASTER', SENTINEL_NAME) as string[]
      const f: Record<string, string> = {}
      for (let i = 0; i + 1 < m.length; i += 2) f[m[i] as string] = m[i + 1] as string
      return Number(f['num-slaves']) >= replicas.length && Number(f['num-other-sentinels']) >= 2 ? true : null
    }, 20_000)
  }

  return {
    name: SENTINEL_NAME,
    primary,
    replicas,
    sentinels,
    sentinelsEnv: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    client,
    primaryPortNow: async () => {
      for (const s of sentinels) {
        if (s.proc.exitCode !== null) continue
        try {
          const [, port] = await client(s.port).call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME) as [string, string]
          return Number(port)
        } catch {}
      }
      throw new Error('no sentinel answers')
    },
    kill
  }
}

/** Waits until every replica has received everything the primary has written so far. */
export async function replicasCaughtUp (setup: SentinelSetup, timeoutMs = 5000): Promise<void> {
  const p = setup.client(setup.primary.port)
  const target = Number(infoField(await p.info('replication'), 'master_repl_offset'))
  for (const r of setup.replicas) {
    const c = setup.client(r.port)
    await until(`replica ${r.port} caught up`, async () => Number(infoField(await c.info('replication'), 'slave_repl_offset')) >= target ? true : null, timeoutMs)
  }
}

/** Waits until the Sentinels report a primary other than `oldPort`, and it answers as a primary. */
export async function promoted (setup: SentinelSetup, oldPort: number, timeoutMs: number): Promise<number> {
  return await until('a replica promoted', async () => {
    const port = await setup.primaryPortNow()
    if (port === oldPort) return null
    const role = infoField(await setup.client(port).info('replication'), 'role')
    return role === 'master' ? port : null
  }, timeoutMs)
}
