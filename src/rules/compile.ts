// Compiles checked rules once per load into plain closures. Evaluation does no I/O, keeps no state between
// calls and allocates only its result (and the `values` of rules that matched).
//
// Semantics (README.rules.md, "Comparisons"):
// - eq/ne/in/notIn compare with ===, so strings compare as strings; the loader has already made the operand's
//   type match the field's.
// - gt/gte/lt/lte/between compare numbers; a digits field ("7995") is read as its number.
// - A missing fact fails every test except `exists: false`, `ne` and `notIn`: those two are the negations
//   of eq and in, exactly as `{"not": {...eq...}}` would be, so "is not 7995" holds when there is no mcc.
import { RISK_PREFIX } from './fields.js'
import type { Condition } from './conditions.js'
import type { Operand } from './operators.js'
import type { CheckedRule } from './validate.js'
import { ruleSetVersion } from './version.js'
import { CALENDAR_RETAIN_MS, calendarStartMs, type CalendarPeriod } from './window.js'
import type { CompiledRuleSet, Evaluation, Facts } from './types.js'
import type { FactValue, LimitCheck, RuleHit } from '../domain/rule-hits.js'

type Predicate = (f: Facts) => boolean

const DIGITS = /^[0-9]+$/

/** A digits field's string as a number; NaN (which fails every comparison) when absent or not digits. */
function digitsNumber (v: FactValue): number {
  return typeof v === 'string' && DIGITS.test(v) ? Number(v) : NaN
}

function integerNumber (v: FactValue): number {
  return typeof v === 'number' ? v : NaN
}

function compileTest (field: string, numeric: (v: FactValue) => number, o: Operand): Predicate {
  switch (o.op) {
    case 'eq': { const x = o.value; return f => f[field] === x }
    case 'ne': { const x = o.value; return f => f[field] !== x }
    case 'in': { const s = new Set<FactValue>(o.values); return f => s.has(f[field]) }
    case 'notIn': { const s = new Set<FactValue>(o.values); return f => !s.has(f[field]) }
    case 'gt': { const x = o.value; return f => numeric(f[field]) > x }
    case 'gte': { const x = o.value; return f => numeric(f[field]) >= x }
    case 'lt': { const x = o.value; return f => numeric(f[field]) < x }
    case 'lte': { const x = o.value; return f => numeric(f[field]) <= x }
    case 'between': {
      const { lo, hi } = o
      return f => { const n = numeric(f[field]); return n >= lo && n <= hi }
    }
    case 'startsWith': {
      const x = o.value
      return f => { const v = f[field]; return typeof v === 'string' && v.startsWith(x) }
    }
    case 'exists': return o.value ? f => f[field] !== undefined : f => f[field] === undefined
  }
}

export function compileCondition (c: Condition): Predicate {
  switch (c.type) {
    case 'test': return compileTest(c.field, c.kind === 'digits' ? digitsNumber : integerNumber, c.operand)
    case 'not': { const p = compileCondition(c.item); return f => !p(f) }
    case 'all': {
      const ps = c.items.map(compileCondition)
      if (ps.length === 2) { const [a, b] = ps as [Predicate, Predicate]; return f => a(f) && b(f) }
      return f => { for (const p of ps) if (!p(f)) return false; return true }
    }
    case 'any': {
      const ps = c.items.map(compileCondition)
      return f => { for (const p of ps) if (p(f)) return true; return false }
    }
  }
}

const always: Predicate = () => true

interface CompiledRule {
  id: string
  mode: CheckedRule['mode']
  code: CheckedRule['code']
  fields: readonly string[]
  test: Predicate
  limit: CheckedRule['limit']
}

function pick (facts: Facts, fields: readonly string[]): Record<string, FactValue> {
  const out: Record<string, FactValue> = {}
  for (const k of fields) out[k] = facts[k]
  return out
}

function deepFreeze<T> (v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v)
    for (const x of Object.values(v)) deepFreeze(x)
  }
  return v
}

export interface CompileOptions {
  version: string
  timezone: string
}

export function compileRuleSet (checked: readonly CheckedRule[], opts: CompileOptions): CompiledRuleSet {
  const { timezone } = opts
  const rules: CompiledRule[] = checked.map(r => ({
    id: r.id,
    mode: r.mode,
    code: r.code,
    fields: Object.freeze([...r.fields]),
    test: r.when === null ? always : compileCondition(r.when),
    limit: r.limit
  }))

  function evaluate (facts: Facts, nowMs: number): Evaluation {
    let decline: RuleHit | null = null
    const shadowHits: RuleHit[] = []
    const limits: LimitCheck[] = []
    // Period starts cost several zoned-time look-ups each; work them out at most once per evaluation (the
    // cache is made when a calendar limit matches, not for every evaluation).
    let starts: Partial<Record<CalendarPeriod, number>> | null = null
    for (const r of rules) {
      if (!r.test(facts)) continue
      const limit = r.limit
      if (limit === null) {
        if (r.mode === 'shadow') {
          shadowHits.push({ ruleId: r.id, code: r.code, mode: r.mode, values: pick(facts, r.fields) })
        } else if (decline === null) {
          decline = { ruleId: r.id, code: r.code, mode: r.mode, values: pick(facts, r.fields) }
        }
        continue
      }
      let windowStartMs: number
      let retainMs: number
      const w = limit.window
      if (w.kind === 'rolling') {
        windowStartMs = nowMs - w.lengthMs
        retainMs = w.lengthMs
      } else {
        const cache = starts ??= {}
        windowStartMs = cache[w.period] ?? (cache[w.period] = calendarStartMs(w.period, nowMs, timezone))
        retainMs = CALENDAR_RETAIN_MS[w.period]
      }
      limits.push({
        ruleId: r.id,
        mode: r.mode,
        measure: limit.measure,
        per: limit.per,
        windowStartMs,
        retainMs,
        max: limit.max,
        code: r.code,
        values: pick(facts, r.fields)
      })
    }
    return { decline, shadowHits, limits }
  }

  return {
    version: opts.version,
    // Shadow rules are evaluated too (their hits are recorded), so they need the risk facts as much as
    // enforce rules do.
    needsRisk: checked.some(r => r.fields.some(f => f.startsWith(RISK_PREFIX))),
    rules: deepFreeze(checked.map(r => ({ ...r.source, file: r.file }))),
    evaluate
  }
}

/** A set with no rules: every transaction passes the rules stage. */
export function emptyRuleSet (): CompiledRuleSet {
  return compileRuleSet([], { version: ruleSetVersion([]), timezone: 'UTC' })
}
