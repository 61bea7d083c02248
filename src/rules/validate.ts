// Validates a rule set as a whole (every file, every rule) and returns either the checked rules, ready to
// compile, or every error found. Nothing here touches the file system: load.ts hands in the files' text.
import type { ResponseCode } from '../domain/request.js'
import type { RuleMode } from '../domain/rule-hits.js'
import { checkWhen, type Condition } from './conditions.js'
import { ruleError, type RuleError } from './errors.js'
import { schemaErrors } from './schema.js'
import { jsonErrorOffset } from './json-position.js'
import { parseWindow, type Window } from './window.js'

/** Most rules in a set: bounds evaluation time per request. */
export const rulesMax = 1000
/** Most errors reported for one set; the rest are summarised in one RULE_ERRORS_TRUNCATED entry. */
export const ruleErrorsMax = 100

export interface RuleFile {
  /** the file's name (no directory), as errors name it */
  name: string
  text: string
}

export interface CheckedLimit {
  measure: 'count' | 'amount'
  per: 'urn' | 'card'
  window: Window
  max: number
}

export interface CheckedRule {
  id: string
  file: string
  description?: string
  mode: RuleMode
  code: ResponseCode
  /** null: no `when`, the rule always matches */
  when: Condition | null
  fields: string[]
  limit: CheckedLimit | null
  /** the rule as written, for GET /admin/v1/rules */
  source: Record<string, unknown>
}

/** warnings: reported, not refused (a rule that can never be reached) */
export type ValidationResult =
  | { ok: true, rules: CheckedRule[], warnings: RuleError[] }
  | { ok: false, errors: RuleError[], warnings: RuleError[] }

interface RawRule {
  id: string
  description?: string
  mode?: RuleMode
  when?: unknown
  limit?: { measure: 'count' | 'amount', per: 'urn' | 'card', window: string, max: number }
  then: { decline: ResponseCode }
}

/** 1-based line and column of a character offset, as editors count them. */
export function lineColumn (text: string, offset: number): { line: number, column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)))
  const lines = before.split('\n')
  return { line: lines.length, column: (lines[lines.length - 1] as string).length + 1 }
}

const JSON_POSITION = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?/

function parse (file: RuleFile, errors: RuleError[]): unknown {
  try {
    return JSON.parse(file.text)
  } catch (err) {
    // V8 names an offset for some mistakes only, and quotes text around it with newlines; an editor wants
    // line and column, the log one line.
    const message = (err as Error).message.replace(/\s+/g, ' ')
    const m = JSON_POSITION.exec(message)
    const found = jsonErrorOffset(file.text)
    const { line, column } = lineColumn(file.text, found >= 0 ? found : m === null ? file.text.length : Number(m[1]))
    const e = ruleError('RULE_JSON_INVALID', file.name, null, `line ${line}, column ${column}: ${message.replace(JSON_POSITION, '')}`,
      undefined, 'a trailing comma, a missing comma or an unquoted name is the usual cause')
    e.line = line
    e.column = column
    errors.push(e)
    return undefined
  }
}

function asRecord (v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : null
}

/** The checks beyond the schema for one rule; appends errors, returns the rule when the schema passed too. */
function checkRule (file: string, index: number, raw: unknown, schemaOk: boolean, errors: RuleError[]): CheckedRule | null {
  const rec = asRecord(raw)
  if (rec === null) return null
  const base = `/rules/${index}`
  const ruleId = typeof rec.id === 'string' && rec.id !== '' ? rec.id : null
  let ok = schemaOk

  let when: Condition | null = null
  let fields: string[] = []
  if (asRecord(rec.when) !== null) {
    const checked = checkWhen(rec.when)
    for (const i of checked.issues) errors.push(ruleError(i.code, file, ruleId, i.detail, `${base}/when${i.path}`, i.hint))
    if (checked.issues.length > 0) ok = false
    when = checked.condition
    fields = checked.fields
  }

  let window: Window | null = null
  const limit = asRecord(rec.limit)
  if (limit !== null && typeof limit.window === 'string') {
    const w = parseWindow(limit.window)
    if ('error' in w) {
      errors.push(ruleError('RULE_WINDOW_INVALID', file, ruleId, w.error, `${base}/limit/window`))
      ok = false
    } else {
      window = w
    }
  }

  if (!ok) return null
  const r = raw as RawRule
  const out: CheckedRule = {
    id: r.id,
    file,
    mode: r.mode ?? 'enforce',
    code: r.then.decline,
    when,
    fields,
    limit: r.limit === undefined || window === null
      ? null
      : { measure: r.limit.measure, per: r.limit.per, window, max: r.limit.max },
    source: rec
  }
  if (r.description !== undefined) out.description = r.description
  return out
}

const RULE_INDEX = /^\/rules\/(\d+)/

function ruleIndex (e: RuleError): number {
  const m = RULE_INDEX.exec(e.path ?? '')
  return m === null ? -1 : Number(m[1])
}

/**
 * Enforce rules after one that declines every transaction (no `when`, no `limit`) never decide: the first
 * stateless decline wins and limits count only approved transactions. Shadow rules are still recorded.
 */
function unreachable (rules: readonly CheckedRule[]): RuleError[] {
  const blocker = rules.find(r => r.mode === 'enforce' && r.when === null && r.limit === null)
  if (blocker === undefined) return []
  const at = rules.indexOf(blocker)
  return rules.slice(at + 1).filter(r => r.mode === 'enforce').map(r => ruleError('RULE_UNREACHABLE', r.file, r.id,
    `"${blocker.id}" (${blocker.file}) has no "when" and no "limit", so it declines every transaction first`,
    undefined, `give "${blocker.id}" a "when", make it "mode": "shadow", or move it last`))
}

export function validateRuleSet (files: readonly RuleFile[]): ValidationResult {
  const errors: RuleError[] = []
  const rules: CheckedRule[] = []
  const firstFileOfId = new Map<string, string>()
  let count = 0

  for (const file of files) {
    const doc = parse(file, errors)
    if (doc === undefined) continue
    const schema = schemaErrors(file.name, doc)
    const list = asRecord(doc)?.rules
    if (!Array.isArray(list)) {
      errors.push(...schema)
      continue
    }
    const fileErrors: RuleError[] = [...schema]
    list.forEach((raw: unknown, index) => {
      const path = `/rules/${index}`
      const schemaOk = !schema.some(e => e.path === path || (e.path?.startsWith(path + '/') ?? false))
      const rule = checkRule(file.name, index, raw, schemaOk, fileErrors)
      if (rule !== null) rules.push(rule)
      const id = asRecord(raw)?.id
      if (typeof id === 'string' && id !== '') {
        const first = firstFileOfId.get(id)
        if (first === undefined) {
          firstFileOfId.set(id, file.name)
        } else {
          fileErrors.push(ruleError('RULE_ID_DUPLICATE', file.name, id, `"${id}" is already used in ${first}`, `${path}/id`))
        }
      }
    })
    count += list.length
    // Report a file's errors rule by rule, as the operator reads the file (sort is stable).
    errors.push(...fileErrors.sort((a, b) => ruleIndex(a) - ruleIndex(b)))
  }
  if (count > rulesMax) errors.push(ruleError('RULE_SET_TOO_LARGE', files[files.length - 1]?.name ?? '', null, `${count} rules; the limit is ${rulesMax}`))

  const warnings = unreachable(rules)
  if (errors.length === 0) return { ok: true, rules, warnings }
  if (errors.length > ruleErrorsMax) {
    const more = errors.length - ruleErrorsMax
    errors.length = ruleErrorsMax
    errors.push(ruleError('RULE_ERRORS_TRUNCATED', '', null, `${more} more`))
  }
  return { ok: false, errors, warnings }
}
