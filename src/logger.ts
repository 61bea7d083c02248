// The process logger: pino with secrets, card data and credentials censored wherever they appear.
import { pino, type Logger, type DestinationStream } from 'pino'
import { REDACT_CENSOR, REDACT_PATHS } from './adapters/redact.js'

export function createLogger (level: string, stream?: DestinationStream): Logger {
  const opts = {
    level,
    base: { service: 'extauth' },
    redact: { paths: [...REDACT_PATHS, 'req.headers.authorization', 'req.headers["x-consumer-custom-id"]'], censor: REDACT_CENSOR }
  }
  return stream === undefined ? pino(opts) : pino(opts, stream)
}
