// Imports a statement: the whole file checked first (nothing applied on any bad line), then each posting
// applied once by platformId, a bounded number in flight. Two passes over the file: memory stays bounded
// whatever its length (the platformIds seen, for duplicates within the file, are the one set kept).
import type { Store } from '../store/types.js'
import { readCsv, readExtauthV1, type StatementItem } from './statement-reader.js'
import type { StatementMap } from './statement-maps.js'
import { lifecycleVerdict } from './lifecycle-match.js'
import { HashSet53 } from './id-set.js'
import { journalFor } from '../journal/for-store.js'
import { LIFECYCLE_POSTINGS, POSTING_HORIZON_MS, POSTING_RETENTION_MS, type Outcome, type PostingResult, type SettlementStore, type StatementHeader, type StatementReport } from './types.js'

export interface LineError { line: number, error: string }

export interface ImportOptions {
  store: Store
  settlement: SettlementStore
  file: string
  /** a named map (STATEMENT_MAPS_FILE) for another layout; absent: extauth-v1 */
  map?: StatementMap
  /** a mapped file's statement: its id, period and completeness (extauth-v1 carries its own) */
  header?: Partial<StatementHeader>
  dryRun?: boolean
  /** postings in flight at most */
  inFlightMax?: number
  clock?: () => number
  /**
   * SETTLEMENT_GRACE: after a complete statement, its period's approvals older than this that no statement
   * posted are looked for (approved_not_posted); absent: not looked for
   */
  graceMs?: number
  /** each applied posting's outcome (the metrics) */
  onPosting?: (r: PostingResult, amount: number) => void
}

export type ImportResult =
  | { ok: false, errors: LineError[], lines: number }
  | { ok: true, dryRun: boolean, report: StatementReport }

/** two FNV-1a hashes of the id, 32 and 21 bits, as one exact number */
function idHash (id: string): number {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff)
}

/** the first errors are named; the rest counted */
export const LINE_ERRORS_MAX = 100

function items (o: ImportOptions, header: StatementHeader): AsyncGenerator<StatementItem> {
  return o.map === undefined ? readExtauthV1(o.file) : readCsv(o.file, o.map, header)
}

/** the header a mapped file's statement gets where the caller gave none: its id from the file's contents' time span */
function mappedHeader (h: Partial<StatementHeader>): StatementHeader {
  return { id: h.id ?? '', from: h.from ?? '', to: h.to ?? '', complete: h.complete ?? false }
}

const HORIZON_DAYS = POSTING_HORIZON_MS / 86_400_000

function tooOld (postedAt: string): string {
  return `posted ${postedAt}, ${HORIZON_DAYS} days ago or more: a posting's record is kept ${POSTING_RETENTION_MS / 86_400_000} days, so this one may ` +
    'have been applied and forgotten since; take it out of the file (and settle it by hand if it never was)'
}

export async function importStatement (o: ImportOptions): Promise<ImportResult> {
  const errors: LineError[] = []
  let errorCount = 0
  const bad = (line: number, error: string): void => {
    errorCount++
    if (errors.length < LINE_ERRORS_MAX) errors.push({ line, error })
  }
  let header: StatementHeader | null = o.map === undefined ? null : mappedHeader(o.header ?? {})
  if (header !== null && header.id === '') bad(0, 'a mapped statement needs its id (--id, or ?id=)')
  const now = (o.clock ?? Date.now)()
  let lines = 0
  let minPosted = ''
  let maxPosted = ''
  // platformIds twice in the file: a set of 53-bit hashes (8 bytes a line in one typed array, not the string
  // nor a Set's entry), and for the hashes seen twice (a duplicate, or rarely two ids of one hash) a second
  // look at the exact ids
  const seen = new HashSet53()
  const twice = new Set<number>()
  for await (const it of items(o, header ?? mappedHeader({}))) {
    if ('header' in it) { if (o.map === undefined) header = it.header; continue }
    lines++
    if ('error' in it) { bad(it.line, it.error); continue }
    const p = it.posting
    const h = idHash(p.platformId)
    if (seen.add(h)) twice.add(h)
    if (now - Date.parse(p.postedAt) >= POSTING_HORIZON_MS) bad(it.line, tooOld(p.postedAt))
    if (minPosted === '' || p.postedAt < minPosted) minPosted = p.postedAt
    if (maxPosted === '' || p.postedAt > maxPosted) maxPosted = p.postedAt
  }
  seen.clear()
  if (twice.size > 0) {
    const first = new Map<string, number>()
    for await (const it of items(o, header ?? mappedHeader({}))) {
      if (!('posting' in it) || !twice.has(idHash(it.posting.platformId))) continue
      const id = it.posting.platformId
      if (first.has(id)) bad(it.line, `platformId ${id} appears twice in this statement (first on line ${first.get(id) ?? 0})`)
      else first.set(id, it.line)
    }
  }
  errors.sort((x, y) => x.line - y.line)
  if (errorCount > LINE_ERRORS_MAX) errors.push({ line: 0, error: `${errorCount - LINE_ERRORS_MAX} more bad lines` })
  if (errorCount > 0 || header === null) return { ok: false, errors: errors.length > 0 ? errors : [{ line: 1, error: 'no statement header' }], lines }
  if (header.from === '') header.from = minPosted
  if (header.to === '') header.to = maxPosted

  const report: StatementReport = {
    ...header, lines, applied: 0, duplicates: 0, conflicts: 0, outcomes: {}, exceptions: 0, importedAtMs: (o.clock ?? Date.now)()
  }
  if (o.dryRun === true) return { ok: true, dryRun: true, report }
  const count = (outcome: Outcome, amount: number): void => {
    const c = report.outcomes[outcome] ??= { count: 0, amount: '0' }
    c.count++
    c.amount = String(Number(c.amount) + amount)
  }
  const id = header.id
  const inFlightMax = o.inFlightMax ?? 32
  // a counter and one waiter: Promise.race over the postings in flight would cost as many reactions as are
  // in flight, for every posting
  let inFlight = 0
  let wake: (() => void) | null = null
  let failure: unknown = null
  /** until fewer than `n` are in flight (a posting's end wakes it) */
  const below = async (n: number): Promise<void> => {
    for (;;) {
      if (inFlight < n) return
      await new Promise<void>((resolve) => { wake = resolve })
    }
  }
  for await (const it of items(o, header)) {
    if (!('posting' in it)) continue
    const p = it.posting
    const one = (async () => {
      const verdict = LIFECYCLE_POSTINGS.has(p.type) ? await lifecycleVerdict(o.store, p) : null
      const r = await o.settlement.applyPosting(p, id, verdict)
      o.onPosting?.(r, p.amount)
      if (r.status === 'conflict') { report.conflicts++; report.exceptions += r.exceptions.length; return }
      if (r.status === 'replayed' && r.statementId !== id) { report.duplicates++; return }
      report.applied++
      count(r.outcome, p.amount)
      report.exceptions += r.exceptions.length
    })().catch((err: unknown) => { failure ??= err })
    inFlight++
    void one.finally(() => {
      inFlight--
      const w = wake
      wake = null
      w?.()
    })
    await below(inFlightMax)
    if (failure !== null) break
  }
  await below(1)
  // a failure part way (the store gone): what was applied stays applied once; importing again finishes the job
  if (failure !== null) throw failure instanceof Error ? failure : new Error(String(failure))
  if (header.complete && o.graceMs !== undefined) {
    const journal = journalFor(o.store)
    const toMs = Math.min(Date.parse(header.to), (o.clock ?? Date.now)() - o.graceMs)
    if (journal !== null && toMs > Date.parse(header.from)) {
      for await (const e of journal.read(Date.parse(header.from), toMs)) {
        if (e.code !== '00') continue
        const x = await o.settlement.notPosted(e.urn, e.reference, id)
        if (x === null) continue
        count('approved_not_posted', x.amount)
        report.exceptions++
      }
    }
  }
  await o.settlement.putStatement(report)
  return { ok: true, dryRun: false, report }
}
