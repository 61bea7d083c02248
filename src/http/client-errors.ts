// Requests Node's HTTP parser refuses before Fastify sees them (a malformed request line or header, NUL in a
// header, conflicting lengths, headers over the size limit, a request not received within its timeout): the
// public listener still answers with the contract's five-field body and 05, where an answer can be written.
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import { answerFor, type AnswerContext } from './answer.js'
import type { Metrics } from '../metrics.js'

interface ClientError extends Error { code?: string }

/** Sockets whose request was answered (e.g. 401 on its headers) while its body was still arriving. */
const answeredEarly = new WeakSet<Socket>()

/** Marks those sockets: a timeout on the rest of that body must not send the request a second answer. */
export function trackEarlyAnswers (app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => { answeredEarly.delete(request.raw.socket); done() })
  app.addHook('onResponse', (request, _reply, done) => {
    if (!request.raw.complete) answeredEarly.add(request.raw.socket)
    done()
  })
}

/** HTTP status for a parser or timeout error (the body is the same 05 answer for all). */
export function statusForClientError (code: string | undefined): 400 | 408 | 431 {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408
  if (code === 'HPE_HEADER_OVERFLOW') return 431
  return 400
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }

export function clientErrorHandler (ctx: AnswerContext, metrics: Metrics, log: Logger): (err: ClientError, socket: Socket) => void {
  return (err, socket) => {
    // a reset peer has gone: there is nobody to answer
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const status = statusForClientError(err.code)
    metrics.badRequests.inc({ status: String(status) })
    log.info({ code: err.code, status }, 'malformed or too slow request refused by the HTTP parser')
    // a response already under way on this socket (keep-alive) must not get a second one spliced into it
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    // A connection that never sent a byte (a load balancer's pre-opened one) is closed like an idle one:
    // an unasked-for 408 on it would be read as the answer to the next request sent on it.
    if (socket.bytesRead > 0 && socket.writable && inFlight?.headersSent !== true && !answeredEarly.has(socket)) {
      const body = JSON.stringify(answerFor('05', undefined, ctx))
      socket.write(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    }
    socket.destroy()
  }
}
