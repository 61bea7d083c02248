// JSON Schema of a rule file: the structure ajv can check. Conditions (`when`) are only required to be
// objects here; their fields, operators and operands are checked by conditions.ts, which knows the facts'
// types and can name the exact mistake.
import { Ajv, type ErrorObject } from 'ajv'
import { RESPONSE_CODES } from '../domain/request.js'
import { ruleError, type RuleError, type RuleErrorCode } from './errors.js'
import { didYouMean } from './suggest.js'
import { declineHint } from './decline-hint.js'

export const ruleIdLengthMax = 64
export const descriptionLengthMax = 1000

/** Every code of the table but 00: a rule that "declines" with the approval code is a mistake. */
export const DECLINE_CODES: readonly string[] = Object.freeze(Object.keys(RESPONSE_CODES).filter(c => c !== '00'))

export const ruleFileSchema = {
  type: 'object',
  required: ['rules'],
  additionalProperties: false,
  properties: {
    // a rule file may name its JSON Schema so an editor completes and checks it; the service ignores it
    $schema: { type: 'string' },
    description: { type: 'string', maxLength: descriptionLengthMax },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'then'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', minLength: 1, maxLength: ruleIdLengthMax, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
          description: { type: 'string', maxLength: descriptionLengthMax },
          mode: { enum: ['enforce', 'shadow'] },
          when: { type: 'object' },
          limit: {
            type: 'object',
            required: ['measure', 'per', 'window', 'max'],
            additionalProperties: false,
            properties: {
              measure: { enum: ['count', 'amount'] },
              per: { enum: ['urn', 'card'] },
              window: { type: 'string' },
              max: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
            }
          },
          then: {
            type: 'object',
            required: ['decline'],
            additionalProperties: false,
            properties: {
              decline: { enum: DECLINE_CODES }
            }
          }
        }
      }
    }
  }
} as const

// verbose: errors carry the offending value, so the reason can quote what the operator wrote.
const ajv = new Ajv({ allErrors: true, strict: true, verbose: true })
const validateFile = ajv.compile(ruleFileSchema)

/** Which of our codes an ajv error at a given place in a rule stands for. */
const CODE_BY_RULE_PATH: Readonly<Record<string, RuleErrorCode>> = {
  '/id': 'RULE_ID_INVALID',
  '/mode': 'RULE_MODE_INVALID',
  '/when': 'RULE_CONDITION_INVALID',
  '/then/decline': 'RULE_DECLINE_CODE_INVALID',
  '/limit/measure': 'RULE_LIMIT_MEASURE_INVALID',
  '/limit/per': 'RULE_LIMIT_PER_INVALID',
  '/limit/max': 'RULE_LIMIT_MAX_INVALID',
  '/limit/window': 'RULE_WINDOW_INVALID'
}

const RULE_PATH = /^\/rules\/(\d+)(\/.*)?$/

function ruleIdAt (doc: unknown, index: number): string | null {
  const rules = (doc as { rules?: unknown }).rules
  if (!Array.isArray(rules)) return null
  const id = (rules[index] as { id?: unknown } | undefined)?.id
  return typeof id === 'string' && id !== '' ? id : null
}

function toRuleError (file: string, doc: unknown, e: ErrorObject): RuleError {
  let path = e.instancePath
  let code: RuleErrorCode = 'RULE_SCHEMA'
  let detail = `${path === '' ? 'the file' : path} ${e.message ?? e.keyword}`
  let hint: string | undefined
  if (e.keyword === 'additionalProperty' || e.keyword === 'additionalProperties') {
    const prop = String((e.params as { additionalProperty?: unknown }).additionalProperty)
    path = `${path}/${prop}`
    code = 'RULE_PROPERTY_UNKNOWN'
    detail = `"${prop}"`
    const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {})
    if (known.length > 0) hint = didYouMean(prop, known, 'properties here')
  } else if (e.keyword === 'required') {
    const prop = String((e.params as { missingProperty?: unknown }).missingProperty)
    path = `${path}/${prop}`
    code = 'RULE_PROPERTY_MISSING'
    detail = `"${prop}"`
  } else if (e.keyword === 'enum') {
    detail = `got ${JSON.stringify(e.data)}`
    const allowed = ((e.params as { allowedValues?: unknown[] }).allowedValues ?? []).map(String)
    // a decline code is chosen by its meaning, never by its spelling
    hint = e.instancePath.endsWith('/then/decline') ? declineHint(e.data, allowed) : didYouMean(String(e.data), allowed)
  } else {
    // JSON.stringify gives undefined for undefined, whatever its type says
    detail = `${e.message ?? e.keyword}; got ${(JSON.stringify(e.data) as string | undefined)?.slice(0, 80) ?? 'undefined'}`
  }
  const m = RULE_PATH.exec(path)
  const ruleId = m === null ? null : ruleIdAt(doc, Number(m[1]))
  const inRule = m?.[2]
  if (m !== null && inRule !== undefined && code === 'RULE_SCHEMA') {
    code = CODE_BY_RULE_PATH[inRule] ?? code
    if (inRule === '/id' && e.keyword === 'minLength') code = 'RULE_ID_EMPTY'
  }
  return ruleError(code, file, ruleId, detail, path, hint)
}

/** The schema errors of one parsed file, deduplicated by place and code. */
export function schemaErrors (file: string, doc: unknown): RuleError[] {
  if (validateFile(doc)) return []
  const out: RuleError[] = []
  const seen = new Set<string>()
  for (const e of validateFile.errors ?? []) {
    const re = toRuleError(file, doc, e)
    const key = `${re.path ?? ''}\u0000${re.code}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push(re)
  }
  // An empty id also fails the pattern; the one error that says "empty" is the useful one.
  return out.filter(e => e.code !== 'RULE_ID_INVALID' || !seen.has(`${e.path ?? ''}\u0000RULE_ID_EMPTY`))
}
