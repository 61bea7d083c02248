// The validator for bodies whose values must be exactly what was sent: no coercion ("5000" is not an amount,
// "1" not an integer, [5] not 5, null not false), no defaults filled in, nothing removed. Fastify's own
// validator coerces.
import { Ajv } from 'ajv'
import AjvCompiler from '@fastify/ajv-compiler'

// verbose: an error carries its schema, so a worded `anyOf` (http/worded-errors.ts) is refused in its words
export const strictAjv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: true, allowUnionTypes: true, verbose: true })

/** A route's `validatorCompiler` with the strict validator. */
export function strictValidatorCompiler ({ schema }: { schema: object }): ReturnType<Ajv['compile']> {
  return strictAjv.compile(schema)
}

const fastifyValidators = AjvCompiler()

/**
 * A listener's `schemaController.compilersFactory.buildValidator`: every body through the strict validator,
 * whatever route declares it; the other parts (path parameters, query strings) through Fastify's own, which
 * must coerce: they arrive as text, and `?limit=5` is the integer 5.
 */
export const strictBodies: typeof fastifyValidators = (externalSchemas, options) => {
  const loose = fastifyValidators(externalSchemas, options)
  return (route) => route.httpPart === 'body' ? strictValidatorCompiler(route as { schema: object }) : loose(route)
}
