// The validator for bodies whose values must be exactly what was sent: no coercion ("5000" is not an amount,
// "1" not an integer, null not false), no defaults filled in, nothing removed. Fastify's own validator coerces.
import { Ajv } from 'ajv'

export const strictAjv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: true, allowUnionTypes: true })

/** A route's `validatorCompiler` with the strict validator. */
export function strictValidatorCompiler ({ schema }: { schema: object }): ReturnType<Ajv['compile']> {
  return strictAjv.compile(schema)
}
