// Replays the journal, oldest first, through the baseline and the candidate rule sets side by side, and
// compares: the baseline's replay against what was recorded (reproduction), the candidate's against the
// baseline's (changes). Entries before `from` only warm the windows up.
import type { JournalEntry } from '../domain/journal.js'
import type { CompiledRuleSet } from '../rules/types.js'
import { calendarStartMs, parseWindow } from '../rules/window.js'
import type { BacktestSource } from './ndjson-source.js'
import type { BacktestReport, RuleReport, Warning } from './report.js'
import { ShardReplay, type ShardResult, type Tally, type Timed } from './shard.js'

export interface BacktestOptions {
  source: BacktestSource
  candidate: CompiledRuleSet
  baseline: CompiledRuleSet
  /**
   * `given`: every entry is replayed through the baseline (`--baseline <dir>`). `recorded`: the baseline is
   * the rules each decision was made under; only entries of `baseline.version` can be replayed, the others are
   * kept as recorded and reported unreproduced.
   */
  baselineMode: 'given' | 'recorded'
  fromMs: number
  toMs: number
  timezone: string
  defaultCurrency?: string
  /** sample references per rule and direction */
  samplesMax?: number
  /** changed decisions listed one by one; all are counted */
  changedMax?: number
  /** called every `progressEvery` entries read */
  onProgress?: (p: { read: number, atMs: number }) => void
  progressEvery?: number
}

export interface BacktestResult {
  report: BacktestReport
  baselineVersion: string
  candidateVersion: string
  /** where the replay started reading, for the windows' warm-up */
  warmFromMs: number
  /** entries read, warm-up included */
  read: number
}

/** Start of the oldest window any limit of the sets (or a control's daily total) needs at `fromMs`. */
export function warmUpFromMs (sets: readonly CompiledRuleSet[], fromMs: number, timezone: string): number {
  let start = calendarStartMs('day', fromMs, timezone)
  for (const set of sets) {
    for (const r of set.rules as Array<{ limit?: { window?: string } }>) {
      const text = r.limit?.window
      if (text === undefined) continue
      const w = parseWindow(text)
      if ('error' in w) continue
      const s = w.kind === 'rolling' ? fromMs - w.lengthMs : calendarStartMs(w.period, fromMs, timezone)
      if (s < start) start = s
    }
  }
  return start
}

const iso = (ms: number): string => new Date(ms).toISOString()

export interface MergeContext {
  candidate: CompiledRuleSet
  baseline: CompiledRuleSet
  fromMs: number
  toMs: number
  warmFromMs: number
  /** the source's oldest entry when it can tell (undefined: it cannot) */
  earliestMs: number | null | undefined
  samplesMax: number
  changedMax: number
}

function byTime<T> (lists: Array<Array<Timed<T>>>, max = Infinity): T[] {
  return lists.flat().sort((a, b) => a.atMs - b.atMs).slice(0, max).map(x => x.item)
}

/** One report from the shares' results. */
export function mergeShards (shards: readonly ShardResult[], ctx: MergeContext): BacktestReport {
  const { baseline, candidate, warmFromMs } = ctx
  let firstSeenMs: number | null = null
  for (const s of shards) if (s.firstSeenMs !== null && (firstSeenMs === null || s.firstSeenMs < firstSeenMs)) firstSeenMs = s.firstSeenMs
  // Where the windows start to be complete: the journal's first entry when it starts after the warm-up start.
  const reach = ctx.earliestMs === undefined ? firstSeenMs : ctx.earliestMs
  const historyFromMs = reach === null ? ctx.toMs : Math.max(reach, warmFromMs)
  const uncovered = historyFromMs > warmFromMs

  const sum = (f: (s: ShardResult) => number): number => shards.reduce((n, s) => n + f(s), 0)
  const report: BacktestReport = {
    from: iso(ctx.fromMs),
    to: iso(ctx.toMs),
    decisions: sum(s => s.decisions),
    baseline: {
      reproduced: sum(s => s.reproduced),
      unreproduced: byTime(shards.map(s => s.unreproduced)).map(u => {
        let reason: string
        if (u.kind === 'version') reason = `rules version ${u.recordedVersion} is not at hand (the baseline is ${baseline.version}); taken as recorded`
        else if (u.kind === 'version_differs') reason = `made under rules version ${u.recordedVersion}, replayed with the baseline ${baseline.version}: ${u.detail}`
        else if (u.kind === 'limit' && uncovered) reason = `history not covered: the journal starts at ${iso(historyFromMs)}, the windows reach back to ${iso(warmFromMs)}: ${u.detail}`
        else reason = u.detail + (baseline.needsRisk ? '; the rule set reads risk facts, which the journal does not keep' : '')
        return { reference: u.reference, urn: u.urn, recorded: u.recorded, replayed: u.replayed, reason }
      })
    },
    changes: {
      approvedToDeclined: { count: sum(s => s.approvedToDeclined.count), amount: sum(s => s.approvedToDeclined.amount) },
      declinedToApproved: { count: sum(s => s.declinedToApproved.count), amount: sum(s => s.declinedToApproved.amount) }
    },
    rules: [],
    changed: byTime(shards.map(s => s.changed), ctx.changedMax),
    warnings: []
  }

  const baselineIds = (baseline.rules as Array<{ id: string }>).map(r => r.id)
  const candidateIds = (candidate.rules as Array<{ id: string }>).map(r => r.id)
  const inBaseline = new Set(baselineIds)
  const inCandidate = new Set(candidateIds)
  const ids = [...new Set([...baselineIds, ...candidateIds, ...shards.flatMap(s => Object.keys(s.tallies)).sort()])]
  for (const id of ids) {
    const ts = shards.map(s => s.tallies[id]).filter((t): t is Tally => t !== undefined)
    const b = inBaseline.has(id)
    const c = inCandidate.has(id)
    const toDeclined = ts.reduce((n, t) => n + t.toDeclined.count, 0)
    const toApproved = ts.reduce((n, t) => n + t.toApproved.count, 0)
    // A card control is the same in both replays: it is listed only when it changes something.
    if (!b && !c && toDeclined === 0 && toApproved === 0) continue
    const r: RuleReport = {
      id,
      in: b && c ? 'both' : c ? 'candidate' : b ? 'baseline' : 'both',
      hits: ts.reduce((n, t) => n + (c || !b ? t.candidateHits : t.baselineHits), 0),
      approvedToDeclined: { count: toDeclined, amount: ts.reduce((n, t) => n + t.toDeclined.amount, 0), samples: byTime(ts.map(t => t.toDeclined.samples), ctx.samplesMax) },
      declinedToApproved: { count: toApproved, amount: ts.reduce((n, t) => n + t.toApproved.amount, 0), samples: byTime(ts.map(t => t.toApproved.samples), ctx.samplesMax) }
    }
    report.rules.push(r)
  }

  const warnings: Warning[] = report.warnings
  if (uncovered) {
    warnings.push({
      kind: 'history',
      from: iso(warmFromMs),
      to: iso(historyFromMs),
      message: reach === null
        ? `the journal holds no decision from ${iso(warmFromMs)} on`
        : `the journal starts at ${iso(historyFromMs)}, but the longest window needs the traffic from ${iso(warmFromMs)}: ` +
          `limits and daily totals early in the range see less use than they had (uncovered: ${iso(warmFromMs)} .. ${iso(historyFromMs)})`
    })
  }
  const outOfOrder = sum(s => s.outOfOrder)
  if (outOfOrder > 0) {
    warnings.push({ kind: 'order', from: report.from, to: report.to, message: `${outOfOrder} entries arrived earlier than the one before them; they were replayed in the order read` })
  }
  const changedCount = sum(s => s.changedCount)
  if (changedCount > report.changed.length) {
    warnings.push({ kind: 'changed', from: report.from, to: report.to, message: `${changedCount} decisions change; the first ${report.changed.length} are listed` })
  }
  return report
}

export async function runBacktest (opts: BacktestOptions): Promise<BacktestResult> {
  const { baseline, candidate, fromMs, toMs, timezone } = opts
  const samplesMax = opts.samplesMax ?? 5
  const changedMax = opts.changedMax ?? 10_000
  const progressEvery = opts.progressEvery ?? 100_000
  const warmFromMs = warmUpFromMs([baseline, candidate], fromMs, timezone)
  const earliestMs = opts.source.earliestMs !== undefined ? await opts.source.earliestMs() : undefined

  const shard = new ShardReplay({
    candidate, baseline, baselineMode: opts.baselineMode, fromMs, timezone, samplesMax, changedMax,
    ...(opts.defaultCurrency !== undefined ? { defaultCurrency: opts.defaultCurrency } : {})
  })
  let next = progressEvery
  const progress = (atMs: number): void => {
    if (shard.result.read < next) return
    next += progressEvery
    opts.onProgress?.({ read: shard.result.read, atMs })
  }
  if (opts.source.readBatches !== undefined) {
    for await (const b of opts.source.readBatches(warmFromMs, toMs)) {
      const { entries, atMs } = b
      for (let i = 0; i < entries.length; i++) shard.push(entries[i] as JournalEntry, atMs[i] as number)
      if (entries.length > 0) progress(atMs[atMs.length - 1] as number)
    }
  } else {
    for await (const e of opts.source.read(warmFromMs, toMs)) {
      const atMs = Date.parse(e.arrivedAt)
      shard.push(e, atMs)
      progress(atMs)
    }
  }
  const report = mergeShards([shard.result], { candidate, baseline, fromMs, toMs, warmFromMs, earliestMs, samplesMax, changedMax })
  return { report, baselineVersion: baseline.version, candidateVersion: candidate.version, warmFromMs, read: shard.result.read }
}
