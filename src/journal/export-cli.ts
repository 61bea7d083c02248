// `extauth decisions export --from <ISO> --to <ISO> [--out file]`: the journal entries of a time range as
// NDJSON (one JournalEntry a line, oldest first), streamed, with progress on stderr. Reads the store the
// environment names (REDIS_URL or REDIS_CLUSTER_NODES, REDIS_KEY_PREFIX).
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import type { Writable } from 'node:stream'
import { RedisStore, createRedisClient } from '../store/redis.js'
import { RedisJournal } from './source.js'
import type { JournalSource } from '../domain/journal.js'

export const EXPORT_USAGE = '  extauth decisions export --from <ISO 8601> --to <ISO 8601> [--out file]   the journal as NDJSON (REDIS_* from the environment)'

interface Io { out: (line: string) => void, err: (line: string) => void, env: Record<string, string | undefined> }

/** Writes every entry of [fromMs, toMs) to `out`; returns how many. */
export async function exportJournal (source: JournalSource, fromMs: number, toMs: number, out: Writable, progress: (n: number) => void): Promise<number> {
  let n = 0
  for await (const e of source.read(fromMs, toMs)) {
    if (!out.write(JSON.stringify(e) + '\n')) await once(out, 'drain')
    if (++n % 10_000 === 0) progress(n)
  }
  return n
}

export async function decisionsCli (argv: string[], io: Io): Promise<number> {
  let values
  try {
    ({ values } = parseArgs({ args: argv, allowPositionals: true, options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' } } }))
  } catch (err) {
    io.err((err as Error).message)
    return 2
  }
  const fromMs = Date.parse(values.from ?? '')
  const toMs = Date.parse(values.to ?? '')
  if (argv[0] !== 'export' || !Number.isFinite(fromMs) || !Number.isFinite(toMs) || toMs <= fromMs) {
    io.err('usage:\n' + EXPORT_USAGE)
    return 2
  }
  let opened: OpenedRedisJournal
  try {
    opened = await openRedisJournal(io.env)
  } catch (err) {
    io.err((err as Error).message)
    return 2
  }
  const out: Writable = values.out !== undefined ? createWriteStream(values.out) : process.stdout
  const started = Date.now()
  try {
    const n = await exportJournal(opened.source, fromMs, toMs, out, (k) => { io.err(`${k} decisions…`) })
    if (out !== process.stdout) { out.end(); await once(out, 'finish') }
    io.err(`exported ${n} decision(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    return 0
  } catch (err) {
    io.err(`export failed: ${(err as Error).message}`)
    return 1
  } finally {
    await opened.close()
  }
}

export interface OpenedRedisJournal {
  source: RedisJournal
  close: () => Promise<void>
}

/**
 * The decision journal in the Redis the environment names (REDIS_URL or REDIS_CLUSTER_NODES, and
 * REDIS_KEY_PREFIX): only the store's variables, none of the service's own settings. Rejects with a usage
 * line when they are missing or malformed.
 */
export async function openRedisJournal (env: Record<string, string | undefined>): Promise<OpenedRedisJournal> {
  const url = env.REDIS_URL ?? ''
  const nodes = (env.REDIS_CLUSTER_NODES ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
    .map((n) => /^(.+):(\d{1,5})$/.exec(n)).map((m) => (m === null ? null : { host: m[1] as string, port: Number(m[2]) }))
  if ((url === '') === (nodes.length === 0) || nodes.includes(null)) {
    throw new Error('set REDIS_URL or REDIS_CLUSTER_NODES (host:port,...) to the store to read decisions from')
  }
  const prefix = env.REDIS_KEY_PREFIX ?? 'extauth:'
  const client = createRedisClient({
    ...(url !== '' ? { url } : { clusterNodes: nodes as Array<{ host: string, port: number }> }),
    commandTimeoutMs: 30_000
  })
  const store = new RedisStore(client, { prefix })
  await store.connect()
  return { source: new RedisJournal(client, prefix), close: async () => { await store.close() } }
}
