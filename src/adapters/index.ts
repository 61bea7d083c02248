// The adapters' public surface, for the service's wiring (config, card-lifecycle routes, decision pipeline):
// each party's own (its index.ts), the shared result shape and errors of the transport, the options read
// from the environment. Code outside src/adapters/ imports from here.
export * from './gateway/index.js'
export * from './risk/index.js'
export * from './prepaid/index.js'
export { adapterOptionsFromEnv, LIFECYCLE_LOCK_TTL_MS_DEFAULT } from './config.js'
export type { AdapterOptionsFromEnv } from './config.js'
export { AdapterBadRequestError, AdapterConfigError, AdapterOptionError, isAdapterBadRequest } from './transport/errors.js'
export type { AdapterBadRequest } from './transport/errors.js'
export type { CallOptions } from './transport/http.js'
export { ADAPTER_CALLS } from './transport/options.js'
export type { AdapterCall, AdapterDeps, HttpOptions } from './transport/options.js'
export { uncertainDecline } from './transport/result.js'
export type { Answer, DeclinedBase, Failed, FailureReason, Ok } from './transport/result.js'
