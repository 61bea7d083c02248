// Checks a rule's values against what each field can hold (channel from the endpoint's list, hour 0-23,
// dayOfWeek 1-7, a 4-digit MCC, 3-digit currency codes, non-negative amounts), and the tests on one field
// against each other (gt 100 with lt 50; in and notIn that leave nothing). Each of these would otherwise
// load as a rule that silently never matches.
import { fieldExample, fieldSpec, type FieldSpec, type FieldValue } from './fields.js'
import type { Operand } from './operators.js'
import type { RuleErrorCode } from './errors.js'
import { closest } from './suggest.js'

export interface ValueIssue {
  code: RuleErrorCode
  detail: string
  hint: string
}

/** Why `v` is not a value of the field, or null when it is. Operand types are already checked. */
function notAValue (field: string, s: Readonly<FieldSpec>, v: FieldValue): string | null {
  if (s.values !== undefined && !s.values.includes(v as string)) {
    return `${JSON.stringify(v)} is not a ${field} the endpoint accepts`
  }
  if (typeof v === 'number') {
    if (s.min !== undefined && v < s.min) return `${v} is below ${s.min}, the smallest ${field}`
    if (s.max !== undefined && v > s.max) return `${v} is above ${s.max}, the largest ${field}`
  }
  if (typeof v === 'string' && s.kind === 'digits') {
    if (s.digits !== undefined && v.length !== s.digits) return `${JSON.stringify(v)} has ${v.length} digits; a ${field} has ${s.digits}`
    if (s.digitsMax !== undefined && v.length > s.digitsMax) return `${JSON.stringify(v)} has ${v.length} digits; a ${field} has at most ${s.digitsMax}`
  }
  return null
}

/** The numeric range the field's values cover, as gt/lt/between read them. */
function numericRange (s: Readonly<FieldSpec>): [number, number] {
  if (s.kind === 'digits') {
    const n = s.digits ?? s.digitsMax
    return [0, n === undefined ? Infinity : 10 ** n - 1]
  }
  return [s.min ?? -Infinity, s.max ?? Infinity]
}

function rangeWords (s: Readonly<FieldSpec>, field: string): string {
  if (s.kind === 'digits') return s.digits !== undefined ? `a ${field} has ${s.digits} digits` : `a ${field} has at most ${s.digitsMax ?? 0} digits`
  return `${field} is ${s.min ?? '-∞'} to ${s.max ?? '∞'}`
}

function validList (field: string, s: Readonly<FieldSpec>): string {
  if (s.values !== undefined) return `valid: ${s.values.join(', ')}`
  if (s.kind === 'digits' && s.digits !== undefined) return `${s.digits} digits`
  if (s.kind === 'digits' && s.digitsMax !== undefined) return `up to ${s.digitsMax} digits`
  if (s.min !== undefined && s.max !== undefined && s.max - s.min < 100) return `valid: ${s.min} to ${s.max}`
  if (s.min !== undefined) return `at least ${s.min}`
  return ''
}

function hintFor (field: string, s: Readonly<FieldSpec>, bad?: FieldValue): string {
  const parts: string[] = []
  if (bad !== undefined && typeof bad === 'string' && s.values !== undefined) {
    const c = closest(bad, s.values)
    if (c !== null) parts.push(`did you mean \`${c}\`?`)
  }
  const valid = validList(field, s)
  if (valid !== '') parts.push(valid)
  parts.push(`e.g. ${fieldExample(field)}`)
  return parts.join('; ')
}

/** The problems with one test's values; empty when the test can match. */
export function checkValues (field: string, o: Operand): ValueIssue[] {
  const s = fieldSpec(field)
  if (s === undefined) return []
  const out: ValueIssue[] = []
  const value = (op: string, v: FieldValue): void => {
    const why = notAValue(field, s, v)
    if (why !== null) out.push({ code: 'RULE_VALUE_INVALID', detail: `${field} ${op}: ${why}`, hint: hintFor(field, s, v) })
  }
  const never = (what: string): void => {
    out.push({ code: 'RULE_NEVER_MATCHES', detail: `${field} ${what}: ${rangeWords(s, field)}`, hint: hintFor(field, s) })
  }
  const [lo, hi] = numericRange(s)
  switch (o.op) {
    case 'eq':
    case 'ne':
      value(o.op, o.value)
      break
    case 'in':
    case 'notIn':
      for (const v of o.values) value(o.op, v)
      break
    case 'gt': if (o.value >= hi) never(`gt ${o.value}`); break
    case 'gte': if (o.value > hi) never(`gte ${o.value}`); break
    case 'lt': if (o.value <= lo) never(`lt ${o.value}`); break
    case 'lte': if (o.value < lo) never(`lte ${o.value}`); break
    case 'between': if (o.hi < lo || o.lo > hi) never(`between [${o.lo}, ${o.hi}]`); break
    case 'startsWith': {
      const n = s.digits ?? s.digitsMax
      if (n !== undefined && o.value.length > n) never(`startsWith ${JSON.stringify(o.value)}`)
      else if (s.values !== undefined && !s.values.some(v => v.startsWith(o.value))) never(`startsWith ${JSON.stringify(o.value)}`)
      break
    }
    case 'exists': break
  }
  return out
}

/** One test of a conjunction, with where it is written. */
export interface PlacedTest {
  field: string
  operand: Operand
  path: string
}

function operandWords (o: Operand): string {
  switch (o.op) {
    case 'in': case 'notIn': return `${o.op} ${JSON.stringify(o.values)}`
    case 'between': return `between [${o.lo}, ${o.hi}]`
    default: return `${o.op} ${JSON.stringify(o.value)}`
  }
}

/** The values a field can hold, when few enough to list (channel, hour, dayOfWeek, booleans). */
function finiteDomain (s: Readonly<FieldSpec>): FieldValue[] | null {
  if (s.values !== undefined) return [...s.values]
  if (s.kind === 'boolean') return [true, false]
  if (s.kind === 'integer' && s.min !== undefined && s.max !== undefined && s.max - s.min <= 1000) {
    return Array.from({ length: s.max - s.min + 1 }, (_, i) => (s.min as number) + i)
  }
  return null
}

/**
 * Whether tests that must all hold on one field leave a value that satisfies them. A missing fact satisfies
 * ne, notIn and exists: false, so tests made only of those are satisfiable on an optional field.
 */
function satisfiable (field: string, tests: readonly PlacedTest[]): boolean {
  const s = fieldSpec(field)
  if (s === undefined) return true
  let candidates: FieldValue[] | null = null
  const excluded = new Set<FieldValue>()
  let [lo, hi] = numericRange(s)
  const prefixes: string[] = []
  let mustExist = s.alwaysPresent === true
  let mustBeAbsent = false
  const keep = (vs: readonly FieldValue[]): void => {
    candidates = candidates === null ? [...vs] : candidates.filter(c => vs.includes(c))
  }
  for (const { operand: o } of tests) {
    switch (o.op) {
      case 'eq': keep([o.value]); mustExist = true; break
      case 'in': keep(o.values); mustExist = true; break
      case 'ne': excluded.add(o.value); break
      case 'notIn': for (const v of o.values) excluded.add(v); break
      case 'gt': lo = Math.max(lo, o.value + 1); mustExist = true; break
      case 'gte': lo = Math.max(lo, o.value); mustExist = true; break
      case 'lt': hi = Math.min(hi, o.value - 1); mustExist = true; break
      case 'lte': hi = Math.min(hi, o.value); mustExist = true; break
      case 'between': lo = Math.max(lo, o.lo); hi = Math.min(hi, o.hi); mustExist = true; break
      case 'startsWith': prefixes.push(o.value); mustExist = true; break
      case 'exists': if (o.value) mustExist = true; else mustBeAbsent = true; break
    }
  }
  if (mustBeAbsent) return !mustExist
  if (!mustExist) return true
  if (lo > hi) return false
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by keep(), a closure the type checker's narrowing does not see
  const pool: FieldValue[] | null = candidates ?? finiteDomain(s)
  if (pool === null) return true
  return pool.some(v => {
    if (excluded.has(v)) return false
    const n = typeof v === 'number' ? v : typeof v === 'string' && s.kind === 'digits' ? Number(v) : null
    if (n !== null && (n < lo || n > hi)) return false
    return prefixes.every(p => typeof v === 'string' && v.startsWith(p))
  })
}

/** The contradictions among tests that must all hold, one issue per field. */
export function contradictions (tests: readonly PlacedTest[]): Array<ValueIssue & { path: string }> {
  const byField = new Map<string, PlacedTest[]>()
  for (const t of tests) {
    const list = byField.get(t.field)
    if (list === undefined) byField.set(t.field, [t]); else list.push(t)
  }
  const out: Array<ValueIssue & { path: string }> = []
  for (const [field, list] of byField) {
    if (list.length < 2 && fieldSpec(field)?.alwaysPresent !== true) continue
    if (satisfiable(field, list)) continue
    const s = fieldSpec(field) as Readonly<FieldSpec>
    out.push({
      code: 'RULE_CONDITION_CONTRADICTORY',
      detail: `${field} ${list.map(t => operandWords(t.operand)).join(' with ')} leaves no value`,
      hint: hintFor(field, s),
      path: (list[0] as PlacedTest).path
    })
  }
  return out
}
