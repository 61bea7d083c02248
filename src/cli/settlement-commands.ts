// `extauth statement import` and `extauth holds expire` (docs/operations/settlement.md): the store the
// environment names (REDIS_URL or REDIS_CLUSTER_NODES, REDIS_KEY_PREFIX), as `decisions export` reads it.
// A --dry-run import checks the file without a store.
import { RedisStore, createRedisClient } from '../store/redis.js'
import { MemoryStore } from '../store/memory.js'
import type { Store } from '../store/types.js'
import { settlementFor } from '../settlement/for-store.js'
import { importStatement } from '../settlement/import.js'
import { loadStatementMaps } from '../settlement/statement-maps.js'
import { expireDue } from '../settlement/expiry.js'
import { isIsoTime, isStatementId } from '../settlement/statement-reader.js'
import type { StatementReport } from '../settlement/types.js'
import { parseDuration } from '../settlement/config.js'
import type { StatementCliOptions } from './program.js'

interface Io {
  out: (line: string) => void
  err: (line: string) => void
  env: Record<string, string | undefined>
}

async function openStore (env: Record<string, string | undefined>): Promise<RedisStore> {
  const url = env.REDIS_URL ?? ''
  const nodes = (env.REDIS_CLUSTER_NODES ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
    .map((n) => /^(.+):(\d{1,5})$/.exec(n)).map((m) => (m === null ? null : { host: m[1] as string, port: Number(m[2]) }))
  if ((url === '') === (nodes.length === 0) || nodes.includes(null)) {
    throw new Error('set REDIS_URL or REDIS_CLUSTER_NODES (host:port,...) to the store (the embedded store of a running server takes POST /admin/v1/statements)')
  }
  const store = new RedisStore(createRedisClient({
    ...(url !== '' ? { url } : { clusterNodes: nodes as Array<{ host: string, port: number }> }),
    commandTimeoutMs: 30_000
  }), { prefix: env.REDIS_KEY_PREFIX ?? 'extauth:' })
  await store.connect()
  return store
}

/** The report as text: what `GET /admin/v1/statements/:id` answers, a line a figure. */
export function reportText (r: StatementReport & { dryRun?: boolean }): string[] {
  const out = [
    `statement ${r.id}: ${r.from} to ${r.to}${r.complete ? ' (complete)' : ''}${r.dryRun === true ? ' — checked, nothing applied (--dry-run)' : ''}`,
    `lines ${r.lines}, applied ${r.applied}, already applied by another statement ${r.duplicates}, conflicting ${r.conflicts}, exceptions opened ${r.exceptions}`
  ]
  for (const [outcome, c] of Object.entries(r.outcomes)) out.push(`  ${outcome.padEnd(20)} ${String(c.count).padStart(9)}  ${c.amount}`)
  return out
}

/** exit 0 imported (or checked), 1 bad lines (nothing applied) or a failure part way, 2 wrong usage */
export async function statementImport (file: string, o: StatementCliOptions, io: Io, open: (env: Io['env']) => Promise<Store> = openStore): Promise<number> {
  const mapsFile = io.env.STATEMENT_MAPS_FILE ?? ''
  let map
  if (o.map !== undefined) {
    if (mapsFile === '') { io.err('--map needs STATEMENT_MAPS_FILE'); return 2 }
    try {
      map = loadStatementMaps(mapsFile)[o.map]
    } catch (err) {
      io.err(`STATEMENT_MAPS_FILE: ${(err as Error).message}`)
      return 2
    }
    if (map === undefined) { io.err(`no map "${o.map}" in ${mapsFile}`); return 2 }
  }
  if (o.id !== undefined && !isStatementId(o.id)) { io.err('--id must be 1 to 64 letters, digits or ._:-'); return 2 }
  for (const f of ['from', 'to'] as const) if (o[f] !== undefined && !isIsoTime(o[f])) { io.err(`--${f} must be an ISO 8601 time`); return 2 }
  let store: Store
  try {
    store = o.dryRun === true ? new MemoryStore() : await open(io.env)
  } catch (err) {
    io.err((err as Error).message)
    return 2
  }
  try {
    const r = await importStatement({
      store,
      settlement: settlementFor(store),
      file,
      ...(map !== undefined ? { map } : {}),
      header: { ...(o.id !== undefined ? { id: o.id } : {}), ...(o.from !== undefined ? { from: o.from } : {}), ...(o.to !== undefined ? { to: o.to } : {}), ...(o.complete !== undefined ? { complete: o.complete } : {}) },
      dryRun: o.dryRun === true,
      graceMs: parseDuration(io.env.SETTLEMENT_GRACE ?? '48h') ?? 48 * 3_600_000
    })
    if (!r.ok) {
      if (o.json === true) io.out(JSON.stringify({ error: 'STATEMENT_INVALID', lines: r.errors }))
      else for (const e of r.errors) io.err(`${file}:${e.line}: ${e.error}`)
      io.err('nothing was applied')
      return 1
    }
    const report = { ...r.report, dryRun: r.dryRun }
    if (o.json === true) io.out(JSON.stringify(report))
    else for (const l of reportText(report)) io.out(l)
    return 0
  } catch (err) {
    io.err(`import stopped: ${(err as Error).message}; what was applied stays applied once: import the same file again to finish`)
    return 1
  } finally {
    await store.close()
  }
}

/** exit 0 done, 1 failed, 2 wrong usage */
export async function holdsExpire (o: { asOf?: string }, io: Io, open: (env: Io['env']) => Promise<Store> = openStore): Promise<number> {
  if (o.asOf !== undefined && !isIsoTime(o.asOf)) { io.err('--as-of must be an ISO 8601 time'); return 2 }
  let store: Store
  try {
    store = await open(io.env)
  } catch (err) {
    io.err((err as Error).message)
    return 2
  }
  try {
    const asOf = o.asOf === undefined ? Date.now() : Date.parse(o.asOf)
    const n = await expireDue(settlementFor(store), asOf)
    io.out(`expired ${n} hold(s) due by ${new Date(asOf).toISOString()}`)
    return 0
  } catch (err) {
    io.err(`expiry stopped: ${(err as Error).message}; run it again (a hold expires once)`)
    return 1
  } finally {
    await store.close()
  }
}
