// One ajv instance for every answer schema, and the small normalisers that turn the parties' loose JSON
// (codes as numbers or strings, "00" or 0) into the strings and integers our types promise.
import { Ajv } from 'ajv'
import type { ErrorObject, ValidateFunction } from 'ajv'

export const ajv = new Ajv({ allErrors: false, allowUnionTypes: true, strict: true })

/** A numeric code that may arrive as 50020 or "50020". */
export const codeLike = { type: ['string', 'integer'], pattern: '^\\s*\\d{1,8}\\s*$', minimum: 0 } as const
/** An identifier the party may send as a number or a string. */
export const idLike = { type: ['string', 'integer'], minLength: 1, maxLength: 100, minimum: 0 } as const
/** An amount in minor units, as an integer or a string of digits. */
export const amountLike = { type: ['string', 'integer'], pattern: '^\\d{1,15}$', minimum: 0 } as const
export const optionalText = { type: ['string', 'null'] } as const
export const boolLike = { type: ['string', 'boolean'], pattern: '^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$' } as const

// requests we build are checked with every problem listed, so one refusal names all the bad fields
const ajvAll = new Ajv({ allErrors: true, allowUnionTypes: true, strict: true })

export function compile<T> (schema: object): ValidateFunction<T> {
  return ajv.compile<T>(schema)
}

export function compileAllErrors<T> (schema: object): ValidateFunction<T> {
  return ajvAll.compile<T>(schema)
}

/** The first schema error as a path and keyword, without the offending value. */
export function schemaProblem (errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0]
  if (e === undefined) return 'schema'
  return `${e.instancePath === '' ? '/' : e.instancePath} ${e.keyword}`
}

export function asCode (v: string | number): string {
  return String(v).trim()
}

/** "0", "00" and 0 all mean "no error". */
export function isZeroCode (v: string | number | undefined | null): boolean {
  return v !== undefined && v !== null && /^0+$/.test(String(v).trim())
}

/** The numeric value of a code for table look-ups ("01" and 1 are the same code). */
export function codeNumber (code: string): number {
  return /^\d+$/.test(code) ? Number(code) : Number.NaN
}

export function asId (v: string | number | undefined | null): string | undefined {
  return v === undefined || v === null ? undefined : String(v)
}

export function asAmount (v: string | number | undefined | null): number | undefined {
  if (v === undefined || v === null) return undefined
  const n = typeof v === 'number' ? v : Number(v)
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined
}

export function asBool (v: string | boolean | undefined): boolean | undefined {
  if (v === undefined) return undefined
  return typeof v === 'boolean' ? v : v.toLowerCase() === 'true'
}

export function asText (v: string | null | undefined): string | undefined {
  return v === null || v === undefined ? undefined : v
}

/** Drops undefined fields so results compare and print cleanly. */
export function compact<T extends object> (o: T): T {
  for (const k of Object.keys(o) as Array<keyof T>) if (o[k] === undefined) delete o[k]
  return o
}
