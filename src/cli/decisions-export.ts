// `extauth decisions export --from <ISO> --to <ISO> [--out file]` (grammar in src/cli/program.ts): the journal entries of a time range as
// NDJSON (one JournalEntry a line, oldest first), streamed, with progress on stderr. Reads the store the
// environment names (REDIS_URL or REDIS_CLUSTER_NODES, REDIS_KEY_PREFIX). `extauth decisions reindex`:
// decisions kept from before the reference index put into it.
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import type { Writable } from 'node:stream'
import { RedisStore, createRedisClient } from '../store/redis.js'
import { RedisJournal } from '../journal/source.js'
import type { JournalSource } from '../domain/journal.js'

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

/** `extauth decisions export`: exit 0 done, 1 failed part way, 2 wrong usage or no store to read. */
export async function exportDecisions (values: { from: string, to: string, out?: string }, io: Io): Promise<number> {
  const fromMs = Date.parse(values.from)
  const toMs = Date.parse(values.to)
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs) || toMs <= fromMs) {
    io.err(`--from and --to must be ISO 8601 times, --from first (got ${values.from} and ${values.to})`)
    return 2
  }
  const out: Writable = values.out !== undefined ? createWriteStream(values.out) : process.stdout
  const started = Date.now()
  return await withJournal(io, 'export', async (source) => {
    const n = await exportJournal(source, fromMs, toMs, out, (k) => { io.err(`${k} decisions…`) })
    if (out !== process.stdout) { out.end(); await once(out, 'finish') }
    io.err(`exported ${n} decision(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  })
}

/** `extauth decisions reindex`: decisions kept from before the reference index put into it; exit 0, 1 or 2 as export. */
export async function reindexDecisions (io: Io): Promise<number> {
  return await withJournal(io, 'reindex', async (source) => {
    const n = await source.reindex((buckets, kept) => { io.err(`${buckets}/1024 buckets, ${kept} decisions…`) })
    io.err(`reindexed: ${n} decision(s) kept are in the reference index`)
  })
}

/** Runs `work` on the journal the environment names: 0 when done, 1 when it failed, 2 when it cannot open. */
async function withJournal (io: Io, what: string, work: (source: RedisJournal) => Promise<void>): Promise<number> {
  let opened: OpenedRedisJournal
  try {
    opened = await openRedisJournal(io.env)
  } catch (err) {
    io.err((err as Error).message)
    return 2
  }
  try {
    await work(opened.source)
    return 0
  } catch (err) {
    io.err(`${what} failed: ${(err as Error).message}`)
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
