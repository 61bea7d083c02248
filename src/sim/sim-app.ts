// The Fastify instance every simulator starts from: quiet unless given a logger, closing hung
// connections on close (a 'hang' fault would otherwise hold app.close() forever), small bodies only.
import Fastify from 'fastify'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'

export interface SimAppOptions {
  /** a pino logger; the simulators log requests, never bodies */
  logger?: FastifyBaseLogger
}

export function simApp (opts: SimAppOptions): FastifyInstance {
  const base = { forceCloseConnections: true, bodyLimit: 64 * 1024 }
  return opts.logger === undefined ? Fastify({ ...base, logger: false }) : Fastify({ ...base, loggerInstance: opts.logger })
}

/** The header's single value (repeated headers are refused as absent). */
export function header (value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

export function isObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
