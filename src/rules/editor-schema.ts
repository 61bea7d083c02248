// The JSON Schema of a rule file for editors (rules/rules.schema.json, written by `npm run rules:schema`):
// built from the validator's own definitions (the file structure in schema.ts, the facts in fields.ts, the
// operators, the value checks, the decline codes), so completion and squiggles agree with what the
// service refuses. The value and contradiction checks the loader makes on top are not all expressible
// here; the schema never accepts less than the loader does.
import { RESPONSE_CODES } from '../domain/request.js'
import { FIELD_SPECS, type FieldSpec } from './fields.js'
import { inValuesMax, OPERATORS_BY_KIND, type Operator } from './operators.js'
import { ruleDepthMax } from './conditions.js'
import { DECLINE_CODES, ruleFileSchema } from './schema.js'
import { WINDOW_PATTERN } from './window.js'

type Json = Record<string, unknown>

const MAX = Number.MAX_SAFE_INTEGER

/** A value the field can hold, as eq/ne/in/notIn compare it. */
function valueSchema (s: Readonly<FieldSpec>): Json {
  switch (s.kind) {
    case 'string':
      return s.values !== undefined ? { enum: [...s.values] } : { type: 'string' }
    case 'digits':
      return {
        type: 'string',
        pattern: s.digits !== undefined ? `^[0-9]{${s.digits}}$` : s.digitsMax !== undefined ? `^[0-9]{1,${s.digitsMax}}$` : '^[0-9]+$'
      }
    case 'integer':
      return { type: 'integer', minimum: s.min ?? -MAX, maximum: s.max ?? MAX }
    case 'boolean':
      return { type: 'boolean' }
  }
}

/** The numeric range gt/gte/lt/lte/between read the field in. */
function numericRange (s: Readonly<FieldSpec>): [number, number] {
  if (s.kind === 'digits') {
    const n = s.digits ?? s.digitsMax
    return [0, n === undefined ? MAX : Math.min(MAX, 10 ** n - 1)]
  }
  return [s.min ?? -MAX, s.max ?? MAX]
}

function operatorSchema (op: Operator, s: Readonly<FieldSpec>): Json {
  const [lo, hi] = numericRange(s)
  const value = valueSchema(s)
  // Bounds such that the comparison can still hold for some value of the field (hour gte 24 cannot).
  switch (op) {
    case 'eq': return { description: 'equal', ...value }
    case 'ne': return { description: 'not equal (also when the fact is missing)', ...value }
    case 'in': return { description: 'equal to one of them', type: 'array', minItems: 1, maxItems: inValuesMax, items: value }
    case 'notIn': return { description: 'equal to none of them (also when the fact is missing)', type: 'array', minItems: 1, maxItems: inValuesMax, items: value }
    case 'gt': return { description: 'greater than', type: 'integer', minimum: -MAX, maximum: Math.max(-MAX, hi - 1) }
    case 'gte': return { description: 'greater than or equal', type: 'integer', minimum: -MAX, maximum: hi }
    case 'lt': return { description: 'less than', type: 'integer', minimum: Math.min(MAX, lo + 1), maximum: MAX }
    case 'lte': return { description: 'less than or equal', type: 'integer', minimum: lo, maximum: MAX }
    case 'between': {
      const n = { type: 'integer', minimum: -MAX, maximum: MAX }
      return { description: '[lo, hi], inclusive, lo <= hi', type: 'array', minItems: 2, maxItems: 2, items: [n, n] }
    }
    case 'startsWith': {
      const n = s.digits ?? s.digitsMax
      return s.kind === 'digits'
        ? { description: 'string prefix', type: 'string', pattern: `^[0-9]{1,${n ?? 15}}$` }
        : { description: 'string prefix, case-sensitive', type: 'string', minLength: 1 }
    }
    case 'exists': return { description: 'the fact is present (true) or absent (false)', type: 'boolean' }
  }
}

function fieldSchema (name: string, s: Readonly<FieldSpec>): Json {
  const ops = OPERATORS_BY_KIND[s.kind]
  const out: Json = {
    description: `${s.description} (${s.kind})`,
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: Object.fromEntries(ops.map(op => [op, operatorSchema(op, s)]))
  }
  if (s.example !== undefined) out.examples = [(JSON.parse(s.example) as Json)[name]]
  return out
}

function defName (field: string): string {
  return `field:${field}`
}

export function ruleFileJsonSchema (): Json {
  const file = structuredClone(ruleFileSchema) as unknown as Json & { properties: Json & { rules: Json & { items: Json & { properties: Json } } } }
  const rule = file.properties.rules.items
  const p = rule.properties as Record<string, Json & { properties?: Record<string, Json> }>
  const limit = p.limit as Json & { properties: Record<string, Json> }
  const then = p.then as Json & { properties: Record<string, Json> }
  file.properties.$schema = { type: 'string', description: 'this schema, for editors; ignored by the service' }
  ;(file.properties.description as Json).description = 'for people'
  file.properties.rules.description = 'run in file-name order, then in this order'
  ;(p.id as Json).description = 'unique in the whole set; letters, digits, . _ -'
  ;(p.description as Json).description = 'what the rule is for'
  ;(p.mode as Json).description = 'enforce (default) declines; shadow only records what it would have declined'
  p.when = { $ref: '#/definitions/condition', description: 'absent: the rule always matches' }
  p.limit = { ...limit, description: 'decline when this transaction would take the window over max' }
  ;(limit.properties.measure as Json).description = 'count: transactions; amount: sum of debit amounts (minor units)'
  ;(limit.properties.per as Json).description = 'urn: the customer, across cards; card: urn + last4Digits'
  limit.properties.window = { type: 'string', pattern: WINDOW_PATTERN, description: 'rolling Nm, Nh, Nd (at most 31d) or calendar day, week, month', examples: ['10m', '1h', '24h', 'day', 'month'] }
  ;(limit.properties.max as Json).description = 'the most the window may hold with this transaction'
  then.properties.decline = {
    description: 'the response code to answer',
    oneOf: DECLINE_CODES.map(c => ({ const: c, description: RESPONSE_CODES[c as keyof typeof RESPONSE_CODES] }))
  }

  const conditionList = { type: 'array', minItems: 1, items: { $ref: '#/definitions/condition' } }
  const definitions: Json = {
    condition: {
      description: `fields and combinators, all of which must hold; nests at most ${ruleDepthMax} deep`,
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: {
        all: { ...conditionList, description: 'every condition holds' },
        any: { ...conditionList, description: 'at least one condition holds' },
        not: { $ref: '#/definitions/condition', description: 'the condition does not hold' },
        ...Object.fromEntries(Object.keys(FIELD_SPECS).map(f => [f, { $ref: `#/definitions/${defName(f)}` }]))
      }
    },
    ...Object.fromEntries(Object.entries(FIELD_SPECS).map(([f, s]) => [defName(f), fieldSchema(f, s)]))
  }

  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $comment: 'Generated from src/rules/ by `npm run rules:schema`; edit the source, not this file.',
    title: 'extauth rule file',
    ...file,
    definitions
  }
}

/** The file's text as written to rules/rules.schema.json. */
export function ruleFileJsonSchemaText (): string {
  return JSON.stringify(ruleFileJsonSchema(), null, 2) + '\n'
}
