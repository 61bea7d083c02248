// POST /api/v1/externalAuth: caller checks, body validation, the decision under a deadline guard, and the
// contract's answer shape for every outcome.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyError } from 'fastify'
import { Ajv } from 'ajv'
import type { AuthRequest, ResponseCode } from '../decision/request.js'
import { decide, type Decision, type DecisionDeps, type PipelineReason } from '../decision/pipeline.js'
import { systemTimers, withDeadline, type Timers } from '../decision/deadline.js'
import { answerFor, type Answer, type AnswerContext } from './answer.js'
import { answerSchema, authRequestSchema, EXTERNAL_AUTH_PATH } from './auth-schema.js'
import { failedHeader, ipAllowed, type HeaderExpectations } from './caller-checks.js'
import type { CidrList } from '../config.js'
import type { Metrics } from '../metrics.js'

export { EXTERNAL_AUTH_PATH }

export interface ExternalAuthOptions {
  deadlineMs: number
  headers: HeaderExpectations
  allowedSourceIps: CidrList
  answer: AnswerContext
  decision: DecisionDeps
  metrics: Metrics
  /** the deadline's clock and timers (fake ones in tests) */
  clock?: { now: () => number, timers: Timers }
  /** which store does not answer and why ({redis: host:port, cause: ECONNREFUSED}), for a store error's log line */
  storeProblem?: () => Record<string, string> | null
}

declare module 'fastify' {
  interface FastifyRequest {
    arrivedAtMs: number
  }
}

// No coercion (a number is not a digit string), no defaults, keep unknown fields (they are ignored).
const ajv = new Ajv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: false, strict: true })

function statusOf (err: FastifyError): number {
  if (err.validation !== undefined) return 400
  const s = err.statusCode ?? 500
  // body too large (413), unsupported content type (415), bad JSON: all "bad body" to the platform
  if (s >= 400 && s < 500) return s === 401 || s === 403 ? s : 400
  // internal errors answer 05 with 200: the platform reads the code, not the status
  return 200
}

export async function externalAuthRoutes (app: FastifyInstance, opts: ExternalAuthOptions): Promise<void> {
  const { metrics } = opts
  const log = app.log
  const clock = opts.clock ?? { now: Date.now, timers: systemTimers }

  function send (reply: FastifyReply, status: number, code: ResponseCode, body: unknown): Answer {
    const a = answerFor(code, body, opts.answer)
    reply.code(status)
    return a
  }

  function logDecision (request: FastifyRequest, body: AuthRequest, code: ResponseCode, reason: PipelineReason | 'deadline', d?: Decision): void {
    const latencyMs = clock.now() - request.arrivedAtMs
    metrics.decisions.inc({ code, reason })
    metrics.decisionSeconds.observe({ code }, latencyMs / 1000)
    if (d?.ruleId != null && (reason === 'rule' || reason === 'limit')) metrics.ruleHits.inc({ rule: d.ruleId, mode: 'enforce' })
    for (const id of d?.shadowHits ?? []) metrics.ruleHits.inc({ rule: id, mode: 'shadow' })
    if (d?.control !== undefined) metrics.controlDeclines.inc({ control: d.control.control, check: d.control.check })
    if (reason === 'conflict') {
      metrics.conflicts.inc()
      log.warn({ reference: body.transactionReferenceNumber, urn: body.urn }, 'reference conflict: same reference, other amount or card')
    }
    log.info({
      reference: body.transactionReferenceNumber,
      urn: body.urn,
      code,
      reason,
      rule: d?.ruleId ?? undefined,
      control: d?.control,
      shadow: d !== undefined && d.shadowHits.length > 0 ? d.shadowHits : undefined,
      replayed: d?.replayed === true ? true : undefined,
      latencyMs
    }, 'decision')
  }

  app.addHook('onRequest', async (request, reply) => {
    request.arrivedAtMs = clock.now()
    if (request.routeOptions.url !== EXTERNAL_AUTH_PATH) return
    if (!ipAllowed(request.ip, opts.allowedSourceIps)) {
      metrics.badRequests.inc({ status: '403' })
      log.warn({ ip: request.ip }, 'source address not allowed')
      return await reply.code(403).send(answerFor('05', undefined, opts.answer))
    }
    const bad = failedHeader(request.headers, opts.headers)
    if (bad !== null) {
      metrics.badRequests.inc({ status: '401' })
      log.warn({ ip: request.ip, header: bad }, 'caller header missing or wrong')
      return await reply.code(401).send(answerFor('05', undefined, opts.answer))
    }
  })

  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const status = statusOf(err)
    if (status === 200) {
      log.error({ err, reference: (request.body as AuthRequest | undefined)?.transactionReferenceNumber }, 'internal error; answered 05')
    } else {
      metrics.badRequests.inc({ status: String(status) })
      log.info({ code: err.code, status, detail: err.validation !== undefined ? err.message : undefined }, 'bad request')
    }
    return send(reply, status, '05', request.body)
  })

  app.post(EXTERNAL_AUTH_PATH, {
    schema: { body: authRequestSchema, response: { '2xx': answerSchema, '4xx': answerSchema } },
    validatorCompiler: ({ schema }) => ajv.compile(schema),
    bodyLimit: 16 * 1024
  }, async (request, reply): Promise<Answer> => {
    const body = request.body as AuthRequest
    const arrivedAtMs = request.arrivedAtMs
    const deadlineAtMs = arrivedAtMs + opts.deadlineMs
    try {
      const g = await withDeadline(deadlineAtMs, async (signal) => await decide(body, { arrivedAtMs, deadlineAtMs, signal }, opts.decision), clock)
      if (g.onDeadline) {
        metrics.deadlineHits.inc()
        logDecision(request, body, '05', 'deadline')
        return send(reply, 200, '05', body)
      }
      logDecision(request, body, g.value.code, g.value.reason, g.value)
      return send(reply, 200, g.value.code, body)
    } catch (err) {
      metrics.storeErrors.inc({ op: 'authorize' })
      const problem = opts.storeProblem?.() ?? null
      log.error({ err: (err as Error).message, ...problem, reference: body.transactionReferenceNumber, urn: body.urn },
        problem === null ? 'store error; answered 05' : `store error; answered 05: redis ${problem.redis ?? ''} unreachable: ${problem.cause ?? ''}`)
      logDecision(request, body, '05', 'store_error')
      return send(reply, 200, '05', body)
    }
  })
}
