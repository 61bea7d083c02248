// A simulator route: count the request, apply the route's fault, run the party's logic, answer.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Fault, FaultBook } from './faults.js'

export interface SimAnswer {
  /** HTTP status; the parties answer 200 and put the outcome in the body */
  status?: number
  body: unknown
}

export type SimHandler = (request: FastifyRequest) => SimAnswer

/** Sends the fault's answer, or returns false when the fault does not end the request. */
function endByFault (fault: Fault, request: FastifyRequest, reply: FastifyReply): boolean {
  if (fault.hang === true) {
    // never answer; the client's timeout (or the sim closing) ends the connection
    reply.hijack()
    return true
  }
  if (fault.reset === true) {
    reply.hijack()
    request.raw.socket.destroy()
    return true
  }
  if (fault.status !== undefined) {
    void reply.code(fault.status).send({ error: 'injected fault', status: fault.status })
    return true
  }
  if (fault.malformed === 'json') {
    void reply.code(200).header('content-type', 'application/json').send('{"status": "succ')
    return true
  }
  if (fault.malformed === 'schema') {
    void reply.code(200).send({ unexpected: 'shape' })
    return true
  }
  return false
}

export function simRoute<R extends string> (
  app: FastifyInstance, book: FaultBook<R>, route: R, path: string, handle: SimHandler
): void {
  app.post(path, async (request, reply) => {
    const fault = book.take(route)
    if (fault?.delayMs !== undefined && fault.delayMs > 0) await sleep(fault.delayMs)
    const after = fault?.phase === 'after'
    if (fault !== undefined && !after && endByFault(fault, request, reply)) return reply
    const answer = handle(request)
    if (fault !== undefined && after && endByFault(fault, request, reply)) return reply
    return reply.code(answer.status ?? 200).send(answer.body)
  })
}
