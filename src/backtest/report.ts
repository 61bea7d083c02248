// The backtest report: the JSON shape of `--json` (contract "Backtest") and the table printed by default.
import { moneyWords } from './money-words.js'

export interface DirectionTotals {
  count: number
  /** debit amounts, integer minor units */
  amount: number
}

export interface Unreproduced {
  reference: string
  urn: string
  recorded: string
  replayed: string
  reason: string
}

export interface RuleReport {
  id: string
  in: 'baseline' | 'candidate' | 'both'
  /** transactions the rule would decline in its set's replay (the candidate's for a rule in both) */
  hits: number
  approvedToDeclined: DirectionTotals & { samples: string[] }
  declinedToApproved: DirectionTotals & { samples: string[] }
}

export interface ChangedDecision {
  reference: string
  urn: string
  from: string
  to: string
  baselineRule: string | null
  candidateRule: string | null
}

export interface Warning {
  /** `history`: the journal does not reach back as far as the windows need; `order`; `changed`: list cut */
  kind: 'history' | 'order' | 'changed'
  from: string
  to: string
  message: string
}

export interface BacktestReport {
  from: string
  to: string
  decisions: number
  baseline: { reproduced: number, unreproduced: Unreproduced[] }
  changes: { approvedToDeclined: DirectionTotals, declinedToApproved: DirectionTotals }
  rules: RuleReport[]
  changed: ChangedDecision[]
  warnings: Warning[]
}

/** Anything that `--fail-on-change` fails on: a decision whose answer differs between the two replays. */
export function hasChanges (r: BacktestReport): boolean {
  return r.changed.length > 0 || r.changes.approvedToDeclined.count > 0 || r.changes.declinedToApproved.count > 0
}

const n = (v: number): string => v.toLocaleString('en-US')

function table (rows: string[][], right: ReadonlySet<number>): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(r => (r[i] ?? '').length))) ?? []
  return rows.map(r => r.map((c, i) => (right.has(i) ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join('  ').trimEnd())
}

export interface HumanOptions {
  baselineLabel: string
  candidateLabel: string
  /** changed decisions printed one by one */
  changedShown?: number
  /** unreproduced decisions printed one by one */
  unreproducedShown?: number
  /** the ISO 4217 numeric currency of the debits (DEFAULT_CURRENCY; 356 when not given) */
  currency?: string
}

export function formatReport (r: BacktestReport, opts: HumanOptions): string[] {
  const out: string[] = []
  out.push(`backtest ${r.from} .. ${r.to}: ${n(r.decisions)} decision(s)`)
  out.push(`baseline:  ${opts.baselineLabel}`)
  out.push(`candidate: ${opts.candidateLabel}`)
  for (const w of r.warnings) out.push(`warning: ${w.message}`)
  out.push('')

  const un = r.baseline.unreproduced
  out.push(`baseline replay: ${n(r.baseline.reproduced)} reproduced, ${n(un.length)} not reproduced`)
  const unShown = opts.unreproducedShown ?? 20
  for (const u of un.slice(0, unShown)) out.push(`  ${u.reference} (${u.urn}): recorded ${u.recorded}, replayed ${u.replayed}: ${u.reason}`)
  if (un.length > unShown) out.push(`  ... and ${n(un.length - unShown)} more (--json lists them all)`)
  out.push('')

  const a = r.changes.approvedToDeclined
  const d = r.changes.declinedToApproved
  const currency = opts.currency ?? '356'
  const money = (v: number): string => moneyWords(v, currency)
  out.push(`changes: approved -> declined ${n(a.count)} (amount ${money(a.amount)}), declined -> approved ${n(d.count)} (amount ${money(d.amount)})`)
  out.push('')

  const rows = [['rule', 'in', 'hits', 'appr->decl', 'amount', 'decl->appr', 'amount', 'samples']]
  for (const x of r.rules) {
    const samples = [...x.approvedToDeclined.samples, ...x.declinedToApproved.samples].join(', ')
    rows.push([x.id, x.in, n(x.hits), n(x.approvedToDeclined.count), money(x.approvedToDeclined.amount), n(x.declinedToApproved.count), money(x.declinedToApproved.amount), samples])
  }
  out.push(...table(rows, new Set([2, 3, 4, 5, 6])))

  if (r.changed.length > 0) {
    out.push('')
    const shown = opts.changedShown ?? 20
    out.push(`changed decisions${r.changed.length > shown ? ` (first ${shown} of ${n(r.changed.length)} listed)` : ''}:`)
    for (const c of r.changed.slice(0, shown)) {
      out.push(`  ${c.reference} (${c.urn}): ${c.from} -> ${c.to}  baseline ${c.baselineRule ?? '-'}, candidate ${c.candidateRule ?? '-'}`)
    }
  }
  return out
}
