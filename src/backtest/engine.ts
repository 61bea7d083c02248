// Replays the journal, oldest first, through the baseline and the candidate rule sets side by side, and
// compares: the baseline's replay against what was recorded (reproduction), the candidate's against the
// baseline's (changes). Entries before `from` only warm the windows up.
import type { JournalEntry } from '../domain/journal.js'
import type { AuthRequest } from '../decision/request.js'
import { buildFacts } from '../rules/facts.js'
import type { CompiledRuleSet } from '../rules/types.js'
import { calendarStartMs, parseWindow } from '../rules/window.js'
import type { BacktestSource } from './ndjson-source.js'
import { Replayer, takenAsRecorded, type ReplayOutcome } from './replay.js'
import type { BacktestReport, DirectionTotals, RuleReport, Unreproduced, Warning } from './report.js'

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

/** Start of the oldest window any limit of the set (or a control's daily total) needs at `fromMs`. */
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

function describe (o: Pick<ReplayOutcome, 'code' | 'reason' | 'ruleId' | 'control'>): string {
  const who = o.ruleId ?? o.control
  return `${o.code} (${o.reason}${who === null ? '' : ` ${who}`})`
}

function sameDecision (e: JournalEntry, o: ReplayOutcome): boolean {
  return e.code === o.code && e.reason === o.reason && (e.ruleId ?? null) === o.ruleId
}

interface RuleTally {
  id: string
  inBaseline: boolean
  inCandidate: boolean
  baselineHits: number
  candidateHits: number
  toDeclined: DirectionTotals & { samples: string[] }
  toApproved: DirectionTotals & { samples: string[] }
}

function ruleIds (set: CompiledRuleSet): string[] {
  return (set.rules as Array<{ id: string }>).map(r => r.id)
}

export async function runBacktest (opts: BacktestOptions): Promise<BacktestResult> {
  const { baseline, candidate, fromMs, toMs, timezone } = opts
  const samplesMax = opts.samplesMax ?? 5
  const changedMax = opts.changedMax ?? 10_000
  const progressEvery = opts.progressEvery ?? 100_000
  const factsOptions = { timezone, risk: null, ...(opts.defaultCurrency !== undefined ? { defaultCurrency: opts.defaultCurrency } : {}) }
  const warmFromMs = warmUpFromMs([baseline, candidate], fromMs, timezone)

  const base = new Replayer(baseline, { timezone })
  const cand = new Replayer(candidate, { timezone })

  const tallies = new Map<string, RuleTally>()
  const tally = (id: string): RuleTally => {
    let t = tallies.get(id)
    if (t === undefined) {
      t = { id, inBaseline: false, inCandidate: false, baselineHits: 0, candidateHits: 0, toDeclined: { count: 0, amount: 0, samples: [] }, toApproved: { count: 0, amount: 0, samples: [] } }
      tallies.set(id, t)
    }
    return t
  }
  for (const id of ruleIds(baseline)) tally(id).inBaseline = true
  for (const id of ruleIds(candidate)) tally(id).inCandidate = true

  const report: BacktestReport = {
    from: iso(fromMs),
    to: iso(toMs),
    decisions: 0,
    baseline: { reproduced: 0, unreproduced: [] },
    changes: { approvedToDeclined: { count: 0, amount: 0 }, declinedToApproved: { count: 0, amount: 0 } },
    rules: [],
    changed: [],
    warnings: []
  }

  const earliest = opts.source.earliestMs !== undefined ? await opts.source.earliestMs() : undefined
  let firstSeenMs: number | null = null
  let lastMs = -Infinity
  let outOfOrder = 0
  let read = 0
  let changedCount = 0
  // Where the windows start to be complete: the journal's first entry when it starts after the warm-up start.
  let historyFromMs = warmFromMs

  const riskNote = (set: CompiledRuleSet): string => set.needsRisk ? '; the rule set reads risk facts, which the journal does not keep' : ''

  for await (const e of opts.source.read(warmFromMs, toMs)) {
    const atMs = Date.parse(e.arrivedAt)
    read++
    if (firstSeenMs === null) {
      firstSeenMs = atMs
      const reach = earliest === undefined ? atMs : earliest
      if (reach === null || reach > warmFromMs) historyFromMs = reach ?? atMs
    }
    if (atMs < lastMs) outOfOrder++
    else lastMs = atMs
    if (opts.onProgress !== undefined && read % progressEvery === 0) opts.onProgress({ read, atMs })

    const facts = buildFacts(e.request as unknown as AuthRequest, { nowMs: atMs, ...factsOptions })
    const versionAtHand = opts.baselineMode === 'given' || e.rulesVersion === baseline.version
    const b = versionAtHand ? base.decide(e, facts, atMs) : base.keepRecorded(e, facts, atMs)
    const c = cand.decide(e, facts, atMs)
    if (atMs < fromMs) continue

    report.decisions++
    for (const id of b.hits) tally(id).baselineHits++
    for (const id of c.hits) tally(id).candidateHits++

    if (!versionAtHand) {
      report.baseline.unreproduced.push(unreproduced(e, b, `rules version ${e.rulesVersion} is not at hand (the baseline is ${baseline.version}); taken as recorded`))
    } else if (sameDecision(e, b)) {
      report.baseline.reproduced++
    } else {
      let why: string
      if (e.rulesVersion !== baseline.version) {
        why = `made under rules version ${e.rulesVersion}; the baseline is ${baseline.version}`
      } else if ((b.reason === 'limit' || b.reason === 'control_limit' || e.reason === 'limit' || e.reason === 'control_limit') && historyFromMs > warmFromMs) {
        why = `history not covered: the journal starts at ${iso(historyFromMs)}, the windows reach back to ${iso(warmFromMs)}`
      } else {
        why = `replayed ${describe(b)}, recorded ${describe({ code: e.code, reason: e.reason, ruleId: e.ruleId, control: e.control?.kind ?? null })}${riskNote(baseline)}`
      }
      report.baseline.unreproduced.push(unreproduced(e, b, why))
    }

    if (b.code === c.code || takenAsRecorded(e)) continue
    changedCount++
    if (report.changed.length < changedMax) {
      report.changed.push({ reference: e.reference, urn: e.urn, from: b.code, to: c.code, baselineRule: b.ruleId ?? controlId(b), candidateRule: c.ruleId ?? controlId(c) })
    }
    const toDeclined = b.code === '00'
    const toApproved = c.code === '00'
    if (toDeclined) {
      report.changes.approvedToDeclined.count++
      report.changes.approvedToDeclined.amount += e.debit
      const id = c.ruleId ?? controlId(c)
      if (id !== null) count(tally(id).toDeclined, e, samplesMax)
    } else if (toApproved) {
      report.changes.declinedToApproved.count++
      report.changes.declinedToApproved.amount += e.debit
      const id = b.ruleId ?? controlId(b)
      if (id !== null) count(tally(id).toApproved, e, samplesMax)
    }
  }

  if (historyFromMs > warmFromMs) {
    report.warnings.push({
      kind: 'history',
      from: iso(warmFromMs),
      to: iso(historyFromMs),
      message: firstSeenMs === null
        ? `the journal holds no decision from ${iso(warmFromMs)} on`
        : `the journal starts at ${iso(historyFromMs)}, but the longest window needs the traffic from ${iso(warmFromMs)}: ` +
          'limits and daily totals early in the range see less use than they had'
    })
  }
  if (outOfOrder > 0) {
    report.warnings.push({ kind: 'order', from: report.from, to: report.to, message: `${outOfOrder} entries arrived earlier than the one before them; they were replayed in the order read` })
  }
  if (changedCount > report.changed.length) {
    report.warnings.push({ kind: 'changed', from: report.from, to: report.to, message: `${changedCount} decisions change; the first ${report.changed.length} are listed` })
  }

  for (const t of tallies.values()) {
    const inWhich = t.inBaseline && t.inCandidate ? 'both' : t.inCandidate ? 'candidate' : t.inBaseline ? 'baseline' : 'both'
    const r: RuleReport = {
      id: t.id,
      in: inWhich,
      hits: t.inCandidate || !t.inBaseline ? t.candidateHits : t.baselineHits,
      approvedToDeclined: t.toDeclined,
      declinedToApproved: t.toApproved
    }
    // A control is listed only when it changes something: it is the same in both replays.
    if (!t.inBaseline && !t.inCandidate && t.toDeclined.count === 0 && t.toApproved.count === 0) continue
    report.rules.push(r)
  }
  return { report, baselineVersion: baseline.version, candidateVersion: candidate.version, warmFromMs, read }
}

function controlId (o: ReplayOutcome): string | null {
  return o.control === null ? null : `control:${o.control}`
}

function count (d: DirectionTotals & { samples: string[] }, e: JournalEntry, samplesMax: number): void {
  d.count++
  d.amount += e.debit
  if (d.samples.length < samplesMax) d.samples.push(e.reference)
}

function unreproduced (e: JournalEntry, b: ReplayOutcome, reason: string): Unreproduced {
  return { reference: e.reference, urn: e.urn, recorded: e.code, replayed: b.code, reason }
}
