// Deleting a run's keys from a shared Redis: SCAN by prefix, UNLINK in batches.
import { Redis } from 'ioredis'

export async function deleteByPrefix (url: string, prefix: string): Promise<number> {
  if (prefix.length < 8) throw new Error(`refusing to delete by the short prefix "${prefix}"`)
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  r.on('error', () => {})
  let deleted = 0
  try {
    await r.connect()
    let cursor = '0'
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) deleted += await r.unlink(...keys)
    } while (cursor !== '0')
  } finally {
    r.disconnect()
  }
  return deleted
}

export async function redisVersion (url: string): Promise<string> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  r.on('error', () => {})
  try {
    await r.connect()
    const info = await r.info('server')
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'
  } finally {
    r.disconnect()
  }
}
