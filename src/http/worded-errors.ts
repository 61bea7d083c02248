// An `anyOf` given words for what it takes (`worded`) is refused in those words, rather than with each
// branch's own complaint ("must be string, must match pattern …, must be integer, must match a schema in
// anyOf"). The words are kept beside the schema, not in it, so any validator compiles it; the strict
// validator is verbose so that an error carries the schema it came from.
import type { FastifySchemaValidationError } from 'fastify/types/schema.js'

const WORDS = new WeakMap<object, string>()

/** The branches of an `anyOf`, refused in `words` wherever a schema uses them. */
export function worded<T extends object[]> (branches: T, words: string): T {
  WORDS.set(branches, words)
  return branches
}

interface Described { keyword: string, schemaPath: string, parentSchema?: Record<string, unknown> }

function wordsOf (e: Described): string | null {
  const branches = e.keyword === 'anyOf' ? e.parentSchema?.anyOf : undefined
  return typeof branches === 'object' && branches !== null ? WORDS.get(branches) ?? null : null
}

/** The errors to report, each with its message: a worded anyOf's branches left out. */
export function wordedErrors (errors: FastifySchemaValidationError[]): Array<FastifySchemaValidationError & { message: string }> {
  const worded = errors.filter((e) => wordsOf(e as Described) !== null)
  return errors
    .filter((e) => !worded.some((w) => e !== w && e.schemaPath.startsWith(`${w.schemaPath}/`)))
    .map((e) => ({ ...e, message: wordsOf(e as Described) ?? e.message ?? 'is not valid' }))
}
