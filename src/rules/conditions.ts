// Checks a rule's `when` and turns it into a typed condition tree for compile.ts: the checks a JSON Schema
// cannot express (known fields, known operators, operands that fit the field's type, nesting depth).
import { FIELD_NAMES, fieldKind, type FieldKind } from './fields.js'
import { checkOperand, isOperator, OPERATORS_BY_KIND, type Operand } from './operators.js'
import type { RuleErrorCode } from './errors.js'
import { didYouMean } from './suggest.js'
import { checkValues, contradictions, type PlacedTest } from './values.js'

/** Deepest nesting of conditions: the `when` object is depth 1, each all/any/not adds one. */
export const ruleDepthMax = 8
/** Most field tests in one rule. */
export const ruleConditionsMax = 256

export type Condition =
  | { type: 'all', items: Condition[] }
  | { type: 'any', items: Condition[] }
  | { type: 'not', item: Condition }
  /** path: the operator's JSON pointer relative to the `when` object, for errors */
  | { type: 'test', field: string, kind: FieldKind, operand: Operand, path: string }

export interface ConditionIssue {
  code: RuleErrorCode
  detail: string
  /** JSON pointer relative to the `when` object */
  path: string
  hint?: string
}

const COMBINATORS = new Set(['all', 'any', 'not'])

function isPlainObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function pointer (base: string, key: string | number): string {
  return `${base}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`
}

interface Walk {
  issues: ConditionIssue[]
  fields: Set<string>
  tests: number
}

function walkNode (node: unknown, path: string, depth: number, w: Walk): Condition | null {
  if (depth > ruleDepthMax) {
    w.issues.push({ code: 'RULE_DEPTH_EXCEEDED', detail: `deeper than ${ruleDepthMax} levels`, path })
    return null
  }
  if (!isPlainObject(node)) {
    w.issues.push({ code: 'RULE_CONDITION_INVALID', detail: 'expected an object', path })
    return null
  }
  const keys = Object.keys(node)
  if (keys.length === 0) {
    w.issues.push({ code: 'RULE_CONDITION_EMPTY', detail: 'an empty condition object', path })
    return null
  }
  // Every key of one object must hold: combinators and fields alike.
  const parts: Condition[] = []
  for (const key of keys) {
    const value = node[key]
    const at = pointer(path, key)
    const part = COMBINATORS.has(key) ? walkCombinator(key, value, at, depth, w) : walkField(key, value, at, w)
    if (part !== null) parts.push(...part)
  }
  if (parts.length === 1) return parts[0] as Condition
  return { type: 'all', items: parts }
}

function walkCombinator (key: string, value: unknown, path: string, depth: number, w: Walk): Condition[] | null {
  if (key === 'not') {
    const item = walkNode(value, path, depth + 1, w)
    return item === null ? null : [{ type: 'not', item }]
  }
  if (!Array.isArray(value)) {
    w.issues.push({ code: 'RULE_CONDITION_INVALID', detail: `${key} takes an array of conditions`, path })
    return null
  }
  if (value.length === 0) {
    w.issues.push({ code: 'RULE_CONDITION_EMPTY', detail: `${key} has no conditions`, path })
    return null
  }
  const items: Condition[] = []
  value.forEach((v, i) => {
    const c = walkNode(v, pointer(path, i), depth + 1, w)
    if (c !== null) items.push(c)
  })
  if (items.length !== value.length) return null
  return [{ type: key as 'all' | 'any', items }]
}

function walkField (field: string, ops: unknown, path: string, w: Walk): Condition[] | null {
  const kind = fieldKind(field)
  if (kind === undefined) {
    w.issues.push({ code: 'RULE_FIELD_UNKNOWN', detail: `"${field}"`, path, hint: didYouMean(field, [...FIELD_NAMES, 'all', 'any', 'not'], 'fields') })
    return null
  }
  w.fields.add(field)
  if (!isPlainObject(ops)) {
    w.issues.push({ code: 'RULE_CONDITION_INVALID', detail: `${field} takes an object of operators, e.g. {"eq": ...}`, path })
    return null
  }
  const names = Object.keys(ops)
  if (names.length === 0) {
    w.issues.push({ code: 'RULE_CONDITION_EMPTY', detail: `${field} has no operator`, path })
    return null
  }
  const out: Condition[] = []
  for (const op of names) {
    const at = pointer(path, op)
    if (!isOperator(op)) {
      w.issues.push({ code: 'RULE_OPERATOR_UNKNOWN', detail: `"${op}"`, path: at, hint: didYouMean(op, OPERATORS_BY_KIND[kind], `operators for ${field}`) })
      continue
    }
    if (++w.tests === ruleConditionsMax + 1) {
      w.issues.push({ code: 'RULE_CONDITIONS_TOO_MANY', detail: `more than ${ruleConditionsMax} field tests`, path: at })
    }
    const operand = checkOperand(op, field, kind, ops[op])
    if ('code' in operand) {
      w.issues.push({ code: operand.code, detail: operand.detail, path: at, ...(operand.hint !== undefined ? { hint: operand.hint } : {}) })
      continue
    }
    const valueIssues = checkValues(field, operand)
    for (const v of valueIssues) w.issues.push({ ...v, path: at })
    if (valueIssues.length > 0) continue
    out.push({ type: 'test', field, kind, operand, path: at })
  }
  return out.length === names.length ? out : null
}

export interface CheckedWhen {
  condition: Condition | null
  /** the fields the condition names, in first-seen order */
  fields: string[]
  issues: ConditionIssue[]
}

/** The tests that must all hold at this node (through nested all), and the alternatives beneath it. */
function conjunction (c: Condition, tests: PlacedTest[], branches: Condition[]): void {
  switch (c.type) {
    case 'test': tests.push({ field: c.field, operand: c.operand, path: c.path }); break
    case 'all': for (const i of c.items) conjunction(i, tests, branches); break
    case 'any': branches.push(...c.items); break
    // Under a negation the tests mean their opposite; such rules are left to the rule's author.
    case 'not': break
  }
}

/** Tests on one field that cannot all hold, in the condition and in each alternative of an `any`. */
function findContradictions (c: Condition, issues: ConditionIssue[]): void {
  const tests: PlacedTest[] = []
  const branches: Condition[] = []
  conjunction(c, tests, branches)
  issues.push(...contradictions(tests))
  for (const b of branches) findContradictions(b, issues)
}

export function checkWhen (when: unknown): CheckedWhen {
  const w: Walk = { issues: [], fields: new Set(), tests: 0 }
  const condition = walkNode(when, '', 1, w)
  if (w.issues.length === 0 && condition !== null) findContradictions(condition, w.issues)
  return { condition: w.issues.length === 0 ? condition : null, fields: [...w.fields], issues: w.issues }
}
