// The operators a condition may use, and which operands each accepts for a field of a given kind.
// Checking operands against the field's type at load time is what keeps `{"mcc": {"eq": 7995}}` (a number
// against the string mcc) from loading as a rule that silently never matches.
import { numericOf } from '../domain/currencies.js'
import { fieldExample, fieldSpec, type FieldKind } from './fields.js'
import type { RuleErrorCode } from './errors.js'

export const OPERATORS = ['eq', 'ne', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'between', 'startsWith', 'exists'] as const
export type Operator = typeof OPERATORS[number]

/** Longest in/notIn list: bounds load time and memory of a rule set. */
export const inValuesMax = 10_000

export type Scalar = string | number | boolean

export type Operand =
  | { op: 'eq' | 'ne', value: Scalar }
  | { op: 'in' | 'notIn', values: Scalar[] }
  | { op: 'gt' | 'gte' | 'lt' | 'lte', value: number }
  | { op: 'between', lo: number, hi: number }
  | { op: 'startsWith', value: string }
  | { op: 'exists', value: boolean }

export interface OperandError { code: RuleErrorCode, detail: string, hint?: string }

const DIGITS = /^[0-9]+$/

export function isOperator (name: string): name is Operator {
  return (OPERATORS as readonly string[]).includes(name)
}

/** Whether `v` is a value a field of this kind can hold (what eq/in compare against). */
function scalarFits (kind: FieldKind, v: unknown): v is Scalar {
  switch (kind) {
    case 'string': return typeof v === 'string'
    case 'digits': return typeof v === 'string' && DIGITS.test(v)
    case 'integer': return Number.isSafeInteger(v)
    case 'boolean': return typeof v === 'boolean'
  }
}

/**
 * What a value of the field looks like, quoting the field's own sample ("356" for currencyCode), and for the
 * value given what to write instead: a number quoted, a currency's letters as its ISO 4217 number.
 */
function kindWord (kind: FieldKind, field: string, given?: unknown): string {
  switch (kind) {
    case 'string': return 'a string'
    case 'digits': {
      const sample = String(fieldSpec(field)?.sample ?? '1')
      if (typeof given !== 'string') return `a string of digits (quote it: "${sample}", not ${Number(sample)})`
      const numeric = field === 'currencyCode' || field === 'billingCurrency' ? numericOf(given) : null
      if (numeric !== null) return `an ISO 4217 numeric code, a string of digits: ${given.toUpperCase()} is "${numeric}"`
      return `a string of digits, e.g. "${sample}"`
    }
    case 'integer': return 'a safe integer'
    case 'boolean': return 'true or false'
  }
}

/** The operators that apply to a field of each kind (exists applies to all). */
export const OPERATORS_BY_KIND: Readonly<Record<FieldKind, readonly Operator[]>> = {
  string: ['eq', 'ne', 'in', 'notIn', 'startsWith', 'exists'],
  digits: ['eq', 'ne', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'between', 'startsWith', 'exists'],
  integer: ['eq', 'ne', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'between', 'exists'],
  boolean: ['eq', 'ne', 'in', 'notIn', 'exists']
}

function isNumeric (kind: FieldKind): boolean {
  return kind === 'integer' || kind === 'digits'
}

/** The checked operand, or why it does not fit the field. */
export function checkOperand (op: Operator, field: string, kind: FieldKind, operand: unknown): Operand | OperandError {
  const hint = `e.g. ${fieldExample(field)}`
  const bad = (detail: string): OperandError => ({ code: 'RULE_OPERAND_INVALID', detail: `${field} ${op}: ${detail}`, hint })
  const notApplicable = (): OperandError => ({
    code: 'RULE_OPERATOR_NOT_APPLICABLE',
    detail: `${op} does not apply to ${field} (${kind})`,
    hint: `${kind} fields take ${OPERATORS_BY_KIND[kind].join(', ')}; ${hint}`
  })
  switch (op) {
    case 'eq':
    case 'ne':
      if (!scalarFits(kind, operand)) return bad(`the operand must be ${kindWord(kind, field, operand)}`)
      return { op, value: operand }
    case 'in':
    case 'notIn': {
      if (!Array.isArray(operand)) return bad('the operand must be an array')
      if (operand.length === 0) return { code: 'RULE_CONDITION_EMPTY', detail: `${field} ${op}: the list is empty`, hint }
      if (operand.length > inValuesMax) return bad(`the list has more than ${inValuesMax} values`)
      for (const v of operand) {
        if (!scalarFits(kind, v)) return bad(`every value must be ${kindWord(kind, field, v)}; ${JSON.stringify(v)} is not`)
      }
      return { op, values: operand as Scalar[] }
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (!isNumeric(kind)) return notApplicable()
      if (!Number.isSafeInteger(operand)) return bad('the operand must be a safe integer')
      return { op, value: operand as number }
    case 'between': {
      if (!isNumeric(kind)) return notApplicable()
      if (!Array.isArray(operand) || operand.length !== 2) return bad('the operand must be [lo, hi]')
      const [lo, hi] = operand as unknown[]
      if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) return bad('lo and hi must be safe integers')
      if ((lo as number) > (hi as number)) return bad('lo must not be greater than hi')
      return { op, lo: lo as number, hi: hi as number }
    }
    case 'startsWith':
      if (kind !== 'string' && kind !== 'digits') return notApplicable()
      if (!scalarFits(kind, operand) || operand === '') return bad(`the operand must be ${kindWord(kind, field)}, not empty`)
      return { op, value: operand as string }
    case 'exists':
      if (typeof operand !== 'boolean') return bad('the operand must be true or false')
      return { op, value: operand }
  }
}
