// What a log line needs to say about the store when it does not answer: which Redis (host and port, never
// the URL, which may carry a password) and why (ECONNREFUSED, ENOTFOUND, ETIMEDOUT...), taken from the
// client's last connection error. Also tells the server when the store first answers, so "extauth ready"
// is logged only then.
import type { EventEmitter } from 'node:events'

export interface StoreProblem {
  /** host:port of the Redis (or the cluster's nodes) */
  redis: string
  /** the error code of the last failed connection, or the error's name when it has no code */
  cause: string
}

export interface StoreStatus {
  /** why the store does not answer; null when it answers (or when nothing is known yet) */
  problem: () => StoreProblem | null
  /** resolves when the store answers; at once for the embedded store */
  ready: Promise<void>
}

export const EMBEDDED_STORE_STATUS: StoreStatus = Object.freeze({ problem: () => null, ready: Promise.resolve() })

/** host:port of a redis:// URL (6379 when it names no port); the URL's password never leaves this function. */
export function redisTarget (url: string | undefined, clusterNodes?: ReadonlyArray<{ host: string, port: number }>): string {
  if (clusterNodes !== undefined && clusterNodes.length > 0) return clusterNodes.map(n => `${n.host}:${n.port}`).join(',')
  try {
    const u = new URL(url ?? '')
    return `${u.hostname}:${u.port === '' ? '6379' : u.port}`
  } catch {
    return 'redis'
  }
}

interface ConnectionError extends Error {
  code?: string
  address?: string
  port?: number
  hostname?: string
  lastNodeError?: ConnectionError
}

export function watchRedisStatus (client: EventEmitter, target: string, isReady: () => boolean): StoreStatus {
  let last: StoreProblem | null = null
  client.on('error', (err: ConnectionError) => {
    // a cluster reports "failed to refresh slots"; the node's own error says why
    const e = err.lastNodeError ?? err
    const where = e.address !== undefined && e.port !== undefined ? `${e.address}:${e.port}` : e.hostname ?? target
    last = { redis: where, cause: e.code ?? e.name }
  })
  const ready = new Promise<void>(resolve => {
    if (isReady()) { resolve(); return }
    client.once('ready', () => { resolve() })
  })
  return {
    problem: () => isReady() ? null : last ?? { redis: target, cause: 'not connected' },
    ready
  }
}
