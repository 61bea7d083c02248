// The process logger: pino with secrets, card data and credentials censored.
//
// Redaction paths are costly per line (they are walked on every write, wildcards most of all). The
// decision path logs only named, secret-free fields, so the main logger censors the secret keys at the
// top level and in request headers; code that logs third-party payloads or errors (the outbound adapters)
// takes `redactingChild`, which censors them at any of the first three levels.
import { pino, type Logger, type DestinationStream } from 'pino'
import { REDACT_CENSOR, REDACT_PATHS, SECRET_KEYS } from './adapters/redact.js'

const TOP_LEVEL_PATHS = [
  ...SECRET_KEYS.map((k) => /^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`),
  'req.headers.authorization', 'req.headers["x-consumer-custom-id"]', 'headers.authorization', 'headers["x-consumer-custom-id"]'
]

export function createLogger (level: string, stream?: DestinationStream): Logger {
  const opts = { level, base: { service: 'extauth' }, redact: { paths: TOP_LEVEL_PATHS, censor: REDACT_CENSOR } }
  if (stream !== undefined) return pino(opts, stream)
  // stdout through a buffered asynchronous writer: one log line per decision must not cost a syscall each;
  // pino flushes it on exit
  const dest = pino.destination({ dest: 1, sync: false, minLength: 4096 })
  // A quiet process must not hold its lines (extauth ready, Redis unreachable, shutting down) until 4 KiB
  // more arrive, nor lose them to a SIGKILL: flush at least every second.
  setInterval(() => { try { dest.flush() } catch {} }, 1000).unref()
  return pino(opts, dest)
}

/** A child logger that censors the secret keys down to three levels deep, for third-party payloads. */
export function redactingChild (log: Logger, bindings: Record<string, unknown>): Logger {
  return log.child(bindings, { redact: { paths: [...REDACT_PATHS], censor: REDACT_CENSOR } })
}
