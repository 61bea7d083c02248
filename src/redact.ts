// Paths the adapters' logger (and the service's main logger) must censor. pino's `*` matches one level,
// so each key is listed at the top level and two levels down: enough for `{req: {headers: {...}}}` and
// `{body: {card: {...}}}`. The adapters never log bodies anyway; this is the belt to that brace.

/** Field names that carry card data, one-time passwords, credentials or opaque tokens. */
export const SECRET_KEYS = [
  'pan', 'cvd2', 'expDate', 'otp', 'securityCode', 'uniqueNumber', 'tokenAuthenticationValue',
  'x-api-key', 'X-Api-Key', 'apiKey', 'Authorization', 'authorization', 'accessToken',
  'secureCode', 'securecode', 'secure-code',
  'X-Consumer-Custom-ID', 'x-consumer-custom-id', 'consumerKey',
  'token'
] as const

function segment (key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `["${key}"]`
}

function pathsFor (key: string): string[] {
  const s = segment(key)
  const top = s.startsWith('.') ? s.slice(1) : s
  return [top, `*${s}`, `*.*${s}`]
}

/** pino `redact.paths` for every secret key at depth 0, 1 and 2. */
export const REDACT_PATHS: readonly string[] = Object.freeze(SECRET_KEYS.flatMap(pathsFor))

export const REDACT_CENSOR = '[REDACTED]'
