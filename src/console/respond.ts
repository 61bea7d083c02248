// Answering a console request: an HTML page, the message left by the action before, who is looking.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Flash, Viewer } from './html.js'

export function sendHtml (reply: FastifyReply, html: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html)
}

/** The message left for this page by the action before, once. */
export function takeFlash (request: FastifyRequest): Flash | null {
  const f = request.session.get('flash') ?? null
  if (f !== null) request.session.set('flash', undefined)
  return f
}

export function viewerOf (request: FastifyRequest): Viewer {
  const v = request.viewer
  if (v === undefined) throw new Error('console route without a signed-in viewer')
  return v
}
