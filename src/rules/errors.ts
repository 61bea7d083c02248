// The catalogue of reasons a rule set is refused. Codes are stable (tests, the CLI and the admin API key on
// them); the message beside each is for the operator reading the list and may be reworded.

export const RULE_ERROR_CODES = {
  RULE_DIR_UNREADABLE: 'the rules directory cannot be read',
  RULE_FILE_UNREADABLE: 'the file cannot be read',
  RULE_FILE_TOO_LARGE: 'the file is larger than the limit',
  RULE_JSON_INVALID: 'the file is not valid JSON',
  RULE_SCHEMA: 'the file does not have the rule-file shape',
  RULE_PROPERTY_UNKNOWN: 'unknown property',
  RULE_PROPERTY_MISSING: 'a required property is missing',
  RULE_SET_TOO_LARGE: 'too many rules in the set',
  RULE_ID_EMPTY: 'the rule id is empty',
  RULE_ID_INVALID: 'the rule id has characters outside [A-Za-z0-9._-] or is too long',
  RULE_ID_DUPLICATE: 'the rule id is used more than once in the set',
  RULE_MODE_INVALID: 'mode must be "enforce" or "shadow"',
  RULE_DECLINE_CODE_INVALID: 'then.decline must be a decline code of the response-code table (not 00)',
  RULE_LIMIT_MEASURE_INVALID: 'limit.measure must be "count" or "amount"',
  RULE_LIMIT_PER_INVALID: 'limit.per must be "urn" or "card"',
  RULE_LIMIT_MAX_INVALID: 'limit.max must be a non-negative safe integer',
  RULE_WINDOW_INVALID: 'bad limit.window (Nm, Nh, Nd up to 31d, or day, week, month)',
  RULE_CONDITION_INVALID: 'bad condition',
  RULE_CONDITION_EMPTY: 'empty condition',
  RULE_DEPTH_EXCEEDED: 'the condition nests deeper than the limit',
  RULE_CONDITIONS_TOO_MANY: 'the rule has more conditions than the limit',
  RULE_FIELD_UNKNOWN: 'unknown field',
  RULE_OPERATOR_UNKNOWN: 'unknown operator',
  RULE_OPERATOR_NOT_APPLICABLE: 'operator not applicable',
  RULE_OPERAND_INVALID: 'bad operand',
  RULE_VALUE_INVALID: 'a value the field never takes',
  RULE_NEVER_MATCHES: 'the test can never hold for this field',
  RULE_CONDITION_CONTRADICTORY: 'the tests on one field contradict each other: the rule can never match',
  RULE_UNREACHABLE: 'the rule can never decide: an earlier enforce rule declines every transaction',
  RULE_ERRORS_TRUNCATED: 'more errors were found than are listed'
} as const

export type RuleErrorCode = keyof typeof RULE_ERROR_CODES

/** One reason a rule set is refused. `path` is a JSON pointer inside the file, when there is one. */
export interface RuleError {
  file: string
  ruleId: string | null
  code: RuleErrorCode
  reason: string
  path?: string
  /** what to write instead: the likely intended name, the valid names, an example of the field */
  hint?: string
  /** JSON syntax errors: where in the file (1-based) */
  line?: number
  column?: number
}

/** Reported but not refused: the set loads (RULE_UNREACHABLE). */
export const RULE_WARNING_CODES: ReadonlySet<RuleErrorCode> = new Set(['RULE_UNREACHABLE'])

export function ruleError (code: RuleErrorCode, file: string, ruleId: string | null, detail?: string, path?: string, hint?: string): RuleError {
  const reason = detail === undefined ? RULE_ERROR_CODES[code] : `${RULE_ERROR_CODES[code]}: ${detail}`
  const e: RuleError = { file, ruleId, code, reason }
  if (path !== undefined) e.path = path
  if (hint !== undefined && hint !== '') e.hint = hint
  return e
}

/** One line per error, as the CLI and logs print them. */
export function formatRuleError (e: RuleError): string {
  const where = e.line === undefined
    ? e.path === undefined ? e.file : `${e.file}${e.path === '' ? '' : ' ' + e.path}`
    : `${e.file}:${e.line}:${e.column ?? 1}`
  const hint = e.hint === undefined ? '' : ` (${e.hint})`
  return `${where}${e.ruleId === null ? '' : ` [${e.ruleId}]`}: ${e.code}: ${e.reason}${hint}`
}

/** Thrown by RulesManager.start when the initial set is refused: the service must not start without rules. */
export class RulesInvalidError extends Error {
  readonly code = 'EXTAUTH_ERR_RULES_INVALID'
  readonly errors: RuleError[]

  constructor (dir: string, errors: RuleError[]) {
    const first = errors[0]
    super(`rule set in ${dir} refused with ${errors.length} error(s)${first === undefined ? '' : `; first: ${formatRuleError(first)}`}`)
    this.name = 'RulesInvalidError'
    this.errors = errors
  }
}
