// The report of a run: what ran, the faults injected per kind, and each violation with what replays it.
import type { SimResult } from './engine.js'
import type { SimOptions } from './options.js'

export function replayCommand (opts: SimOptions, steps: number): string {
  const off = opts.off.size > 0 ? ` SIM_OFF=${[...opts.off].join(',')}` : ''
  return `SIM_SEED=${opts.seed} SIM_STEPS=${steps} SIM_STORE=${opts.store}${off} npm run sim:money`
}

export function summarize (r: SimResult, opts: SimOptions): string {
  const lines: string[] = []
  const per1000 = r.stepsRun > 0 ? (r.elapsedMs / r.stepsRun * 1000).toFixed(0) : '-'
  lines.push(`seed ${r.seed} · store ${r.store} · ${r.stepsRun}/${opts.steps} steps · ${(r.elapsedMs / 1000).toFixed(1)} s (${per1000} ms per 1,000 steps)`)
  if (opts.off.size > 0) lines.push(`off: ${[...opts.off].join(', ')}`)
  const fmt = (o: Record<string, number>): string => Object.entries(o).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(' ')
  lines.push(`operations: ${fmt(r.counts.ops)}`)
  lines.push(`faults injected: ${fmt(r.counts.faults)} (kills ${r.counts.kills})`)
  lines.push(`store calls ${r.counts.storeCalls} · party calls ${r.counts.partyCalls}`)
  lines.push(`answers: ${fmt(r.counts.answers)}`)
  if (r.earlierRecords > 0) lines.push(`card-lifecycle records of earlier formats in the start state: ${r.earlierRecords}`)
  lines.push(`outbox events folded into balances: ${r.eventsFolded}`)
  const s = r.standIn
  if (s !== null) {
    lines.push(`stand-in: ${s.outages} outages (${s.refused} store calls refused), answered 00 ${s.approved} (+${s.fromJournal} repeats from the journal), declined ${s.declined}` +
      `${Object.keys(s.declinedBy).length > 0 ? ` (by ${fmt(s.declinedBy)})` : ''}; ` +
      `replays applied ${s.applied} (${s.unheard} never heard by the platform), existing ${s.existing}, onto another answer ${s.exceptions}, past the horizon to the queue ${s.unconfirmed}; below zero ${s.negative}; ` +
      `${s.windows} outages closed, most used in one: card ${s.cardCountMax} approvals / ${s.cardAmountMax}, instance ${s.instanceCountMax} / ${s.instanceAmountMax}`)
  }
  lines.push(`operations left to an operator with a reconcile note (a repeat refused as 1054, or unconfirmed past retention): ${r.reconcile}`)
  if (r.violations.length === 0) {
    lines.push('invariants: all held')
  } else {
    for (const v of r.violations) lines.push(`VIOLATION ${v.invariant} at step ${v.step} (${v.op}): ${v.detail}`)
    const first = r.violations[0]
    if (first !== undefined) lines.push(`replay: ${replayCommand(opts, first.step)}`)
  }
  return lines.join('\n')
}
