// A Redis Cluster of its own for bench/scale.ts: `masters` redis-servers on free loopback ports (each on a core
// of its own when asked), the 16,384 slots split evenly by CLUSTER ADDSLOTSRANGE and the nodes joined by
// CLUSTER MEET, so one or two masters work too (`redis-cli --cluster create` wants three); each announces
// 127.0.0.1, as a master that never met another would give clients an empty address. No replicas, no
// persistence; stop() kills the servers and deletes their files.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../../scripts/lib/free-port.js'
import { until } from '../../scripts/lib/until.js'

export const SLOTS = 16_384
/** a cluster not agreed (every node: state ok, all masters known) within this is a failed start */
const FORM_TIMEOUT_MS = 20_000

export interface ClusterNode {
  port: number
  pid: number
  /** a plain client to this node alone, for INFO */
  admin: Redis
}

export interface OwnCluster {
  nodes: ClusterNode[]
  /** `host:port,...`, as REDIS_CLUSTER_NODES takes it */
  seeds: string
  stop: () => Promise<void>
}

/**
 * `wrap(i)`: a command that execs redis-server for master i (`['taskset', '-c', '0']`), or none; `started(pid)`
 * is told each server's pid as soon as it runs, so a caller can account for every process it caused.
 */
export async function ownCluster (masters: number, wrap: (i: number) => string[] | undefined, started: (pid: number) => void): Promise<OwnCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-scale-cluster-'))
  const procs: ChildProcess[] = []
  const nodes: ClusterNode[] = []
  const stop = async (): Promise<void> => {
    for (const n of nodes) n.admin.disconnect()
    await Promise.all(procs.map(async (p) => {
      if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return
      const exited = new Promise((resolve) => p.once('exit', resolve))
      p.kill('SIGKILL')
      await exited
    }))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort()
      const args = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1',
        '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--save', '', '--appendonly', 'no', '--dir', dir]
      const argv = [...(wrap(i) ?? []), ...args]
      const p = spawn(argv[0] as string, argv.slice(1), { stdio: 'ignore' })
      p.on('error', () => {})
      procs.push(p)
      if (p.pid === undefined) throw new Error(`could not start ${argv[0] as string}`)
      started(p.pid)
      const admin = new Redis({ host: '127.0.0.1', port, retryStrategy: (n) => (n > 100 ? null : 50), maxRetriesPerRequest: 1 })
      admin.on('error', () => {})
      nodes.push({ port, pid: p.pid, admin })
    }
    await until(async () => { await Promise.all(nodes.map(async (n) => await n.admin.ping())); return true }, 10_000, 'the redis-servers to answer')
    await Promise.all(nodes.map(async (n, i) => {
      await n.admin.call('CLUSTER', 'ADDSLOTSRANGE', String(Math.floor(SLOTS * i / masters)), String(Math.floor(SLOTS * (i + 1) / masters) - 1))
    }))
    const first = nodes[0] as ClusterNode
    for (const n of nodes.slice(1)) await n.admin.call('CLUSTER', 'MEET', '127.0.0.1', String(first.port))
    await until(async () => (await Promise.all(nodes.map(async (n) => String(await n.admin.call('CLUSTER', 'INFO')))))
      .every((info) => info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${masters}\r`)), FORM_TIMEOUT_MS, `a cluster of ${masters} masters`)
  } catch (err) {
    await stop()
    throw err
  }
  return { nodes, seeds: nodes.map((n) => `127.0.0.1:${n.port}`).join(','), stop }
}
