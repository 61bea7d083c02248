// Operating errors of the adapters, as typed errors with stable codes (tests assert on codes).
// A request the party would refuse is caught here before anything leaves the process; the problems name
// fields only, never their values, because those values can be card data or secrets.
import createError from '@fastify/error'

export const AdapterBadRequestError = createError(
  'EXTAUTH_ERR_ADAPTER_BAD_REQUEST', 'Outbound request refused before sending: %s', 400)

export const AdapterOptionError = createError(
  'EXTAUTH_ERR_ADAPTER_OPTION', 'Invalid adapter option %s', 500)

export const AdapterConfigError = createError(
  'EXTAUTH_ERR_ADAPTER_CONFIG', '%s', 500)

export type AdapterBadRequest = InstanceType<typeof AdapterBadRequestError> & { problems: string[] }

export function badRequest (problems: string[]): AdapterBadRequest {
  return Object.assign(new AdapterBadRequestError(problems.join('; ')), { problems })
}

export function isAdapterBadRequest (err: unknown): err is AdapterBadRequest {
  return err instanceof Error && (err as { code?: unknown }).code === 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST'
}
