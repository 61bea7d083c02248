// A Redis Cluster of three masters on free loopback ports, for the tests that must run on one; stopped and
// its files deleted at teardown.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { freePort } from './redis.js'
import { until } from '../../scripts/lib/until.js'

const run = promisify(execFile)

export async function startCluster (t: { teardown: (fn: () => unknown) => void }): Promise<Array<{ host: string, port: number }>> {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-cluster-'))
  const procs: ChildProcess[] = []
  const nodes: Array<{ host: string, port: number }> = []
  t.teardown(async () => {
    for (const p of procs) p.kill('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  })
  for (let i = 0; i < 3; i++) {
    const port = await freePort()
    procs.push(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
      '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' }))
    nodes.push({ host: '127.0.0.1', port })
  }
  for (const n of nodes) {
    await until(async () => {
      const r = new Redis({ ...n, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 })
      r.on('error', () => {})
      try { await r.connect(); await r.ping(); return true } finally { r.disconnect() }
    }, 5000, `redis-server ${n.port}`, 100)
  }
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `${n.host}:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 60_000 })
  await until(async () => {
    const r = new Redis({ ...nodes[0], lazyConnect: true, retryStrategy: () => null })
    r.on('error', () => {})
    try { await r.connect(); return String(await r.call('CLUSTER', 'INFO')).includes('cluster_state:ok') } finally { r.disconnect() }
  }, 10_000, 'cluster_state:ok', 100)
  return nodes
}
