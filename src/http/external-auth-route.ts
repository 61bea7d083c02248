// POST /api/v1/externalAuth: caller checks, body validation, the decision under a deadline guard, and the
// contract's answer shape for every outcome.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyError } from 'fastify'
import { strictValidatorCompiler } from '../strict-ajv.js'
import type { AuthRequest, ResponseCode } from '../domain/request.js'
import { decide, type Decision, type DecisionDeps, type PipelineReason } from '../decision/pipeline.js'
import { DeadlineGuard, systemTimers, type Timers } from '../decision/deadline.js'
import { answerFor, type Answer, type AnswerContext } from './answer.js'
import { answerSchema, authRequestSchema, EXTERNAL_AUTH_PATH } from './auth-schema.js'
import { withoutEmptyOptionals } from '../domain/auth-request-schema.js'
import { failedHeader, ipAllowed, type HeaderExpectations } from './caller-checks.js'
import type { CidrList } from '../config.js'
import type { Metrics } from '../metrics.js'
import { isStoreNotReplicated } from '../errors.js'
import { Counter, type Registry } from 'prom-client'
import { TAGS } from './openapi.js'
import type { Logger } from 'pino'
import { unredacted } from '../logger.js'

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

/** The reference and urn of a refused body, when they are short strings. */
function readableIds (body: unknown): { reference?: string, urn?: string } {
  if (body === null || typeof body !== 'object') return {}
  const b = body as Record<string, unknown>
  const ok = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 64 && /^[\x20-\x7e]+$/.test(v)
  return { ...(ok(b.transactionReferenceNumber) ? { reference: b.transactionReferenceNumber } : {}), ...(ok(b.urn) ? { urn: b.urn } : {}) }
}

function refusalReason (err: FastifyError): string {
  if (err.validation !== undefined) return 'validation'
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'too_large'
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'content_type'
  if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'empty_body'
  return 'bad_json'
}

/** Every refusal's status and reason, each at zero from the start (labelled counters start at zero: runbook). */
const KNOWN_REFUSALS = [
  ['400', 'validation'], ['400', 'bad_json'], ['400', 'too_large'], ['400', 'content_type'], ['400', 'empty_body'], ['401', 'caller'], ['403', 'source']
] as const

/** Refused requests by status and reason, on the app's registry. */
function refusals (registry: Registry): Counter<'status' | 'reason'> {
  const name = 'extauth_rejected_request_reasons_total'
  const known = registry.getSingleMetric(name) as Counter<'status' | 'reason'> | undefined
  if (known !== undefined) return known
  const c = new Counter({ name, help: 'Public requests refused before a decision, by status and reason (validation, bad_json, too_large, content_type, empty_body, caller, source)', labelNames: ['status', 'reason'], registers: [registry] })
  for (const [status, reason] of KNOWN_REFUSALS) c.inc({ status, reason }, 0)
  return c
}

function statusOf (err: FastifyError): number {
  if (err.validation !== undefined) return 400
  const s = err.statusCode ?? 500
  // body too large (413), unsupported content type (415), bad JSON: all "bad body" to the platform
  if (s >= 400 && s < 500) return s === 401 || s === 403 ? s : 400
  // internal errors answer 05 with 200: the platform reads the code, not the status
  return 200
}

/** Sends the answer `make` gives; one that cannot be made goes to the route's error handler (the five-field 05). */
function sendAnswer (reply: FastifyReply, make: () => Answer): void {
  try {
    reply.send(make())
  } catch (err) {
    reply.send(err)
  }
}

export async function externalAuthRoutes (app: FastifyInstance, opts: ExternalAuthOptions): Promise<void> {
  const { metrics } = opts
  const log = app.log
  // the decision line: named, secret-free fields only (src/logger.ts `unredacted`)
  const decisionLog = unredacted(app.log as Logger)
  const clock = opts.clock ?? { now: Date.now, timers: systemTimers }
  const guard = new DeadlineGuard(clock)
  // on the scrape from the start, every reason at zero
  refusals(metrics.registry)

  /** The answer for `code`, with the reply's status set. */
  function answerWith (reply: FastifyReply, status: number, code: ResponseCode, body: unknown): Answer {
    const a = answerFor(code, body, opts.answer)
    reply.code(status)
    return a
  }

  function logDecision (request: FastifyRequest, body: AuthRequest, code: ResponseCode, reason: PipelineReason | 'deadline' | 'not_replicated', d?: Decision): void {
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
    decisionLog.info({
      reference: body.transactionReferenceNumber,
      urn: body.urn,
      code,
      reason,
      rule: d?.ruleId ?? undefined,
      control: d?.control,
      shadow: d !== undefined && d.shadowHits.length > 0 ? d.shadowHits : undefined,
      replayed: d?.replayed === true ? true : undefined,
      standIn: d?.standIn,
      standInCheck: d?.standIn === true && d.reason === 'standin_declined' ? d.values?.check : undefined,
      latencyMs
    }, 'decision')
  }

  // Callback style (no promise per request): a refusal is sent here and `done` is not called.
  app.addHook('onRequest', (request, reply, done) => {
    request.arrivedAtMs = clock.now()
    if (request.routeOptions.url !== EXTERNAL_AUTH_PATH) {
      done()
      return
    }
    if (!ipAllowed(request.ip, opts.allowedSourceIps)) {
      metrics.badRequests.inc({ status: '403' })
      refusals(metrics.registry).inc({ status: '403', reason: 'source' })
      log.warn({ ip: request.ip }, 'source address not allowed')
      reply.code(403).send(answerFor('05', undefined, opts.answer))
      return
    }
    const bad = failedHeader(request.headers, opts.headers)
    if (bad !== null) {
      metrics.badRequests.inc({ status: '401' })
      refusals(metrics.registry).inc({ status: '401', reason: 'caller' })
      log.warn({ ip: request.ip, header: bad }, 'caller header missing or wrong')
      reply.code(401).send(answerFor('05', undefined, opts.answer))
      return
    }
    done()
  })

  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const status = statusOf(err)
    if (status === 200) {
      log.error({ err, reference: (request.body as AuthRequest | undefined)?.transactionReferenceNumber }, 'internal error; answered 05')
    } else {
      metrics.badRequests.inc({ status: String(status) })
      const reason = refusalReason(err)
      refusals(metrics.registry).inc({ status: String(status), reason })
      // what can be read of the body, so "why was TRN-5 refused?" has an answer (never for 401/403: those
      // are answered before the body is read)
      log.info({ code: err.code, status, reason, ...readableIds(request.body), detail: err.validation !== undefined ? err.message : undefined }, 'bad request')
    }
    return answerWith(reply, status, '05', request.body)
  })

  function storeFailed (request: FastifyRequest, reply: FastifyReply, body: AuthRequest, err: unknown): Answer {
    if (isStoreNotReplicated(err)) {
      // approved on the primary, but too few replicas confirmed it in time: released (the pipeline
      // handed it to the compensator) and declined, so a failover cannot lose a 00
      metrics.replicationShortfalls.inc()
      log.warn({ err: (err as Error).message, reference: body.transactionReferenceNumber, urn: body.urn }, 'approval not confirmed by the replicas; released and answered 05')
      logDecision(request, body, '05', 'not_replicated')
      return answerWith(reply, 200, '05', body)
    }
    metrics.storeErrors.inc({ op: 'authorize' })
    const problem = opts.storeProblem?.() ?? null
    log.error({ err: (err as Error).message, ...problem, reference: body.transactionReferenceNumber, urn: body.urn },
      problem === null ? 'store error; answered 05' : `store error; answered 05: redis ${problem.redis ?? ''} unreachable: ${problem.cause ?? ''}`)
    logDecision(request, body, '05', 'store_error')
    return answerWith(reply, 200, '05', body)
  }

  app.post(EXTERNAL_AUTH_PATH, {
    schema: {
      tags: [TAGS.public],
      summary: 'Approve or decline a card transaction (the prepaid platform\'s External Authorization call)',
      description: 'Every outcome, including a refused request, answers the same shape; `responseCode` 00 approves, ' +
        'anything else declines. Answered within the deadline (DEADLINE_MS), 05 when no decision was reached in time.',
      body: authRequestSchema,
      response: { '2xx': answerSchema, '4xx': answerSchema },
      answers: {
        '2xx': { ...answerSchema, description: 'the decision (200), also for an internal error (05)' },
        '4xx': { ...answerSchema, description: '05: a malformed body (400), wrong caller headers (401) or a source address not allowed (403)' }
      }
    },
    // no coercion (a number is not a digit string), no defaults, unknown fields kept (they are ignored)
    validatorCompiler: strictValidatorCompiler,
    bodyLimit: 16 * 1024,
    // no child logger per request: this route logs through `log` and `decisionLog`, never `request.log`
    childLoggerFactory: (logger) => logger
  }, (request, reply) => {
    // read once: an optional field sent as "" is absent from here on
    const body = withoutEmptyOptionals(request.body as AuthRequest)
    const arrivedAtMs = request.arrivedAtMs
    const deadlineAtMs = arrivedAtMs + opts.deadlineMs
    // The answer is sent by whichever comes first, the decision or the guard's deadline, with no promise
    // or timer of its own. A plain handler that returns nothing sends later: Fastify neither waits on a
    // promise nor watches the response for its end (what returning the reply from an async handler costs).
    const f = guard.start(deadlineAtMs, () => sendAnswer(reply, () => {
      metrics.deadlineHits.inc()
      logDecision(request, body, '05', 'deadline')
      return answerWith(reply, 200, '05', body)
    }))
    decide(body, { arrivedAtMs, deadlineAtMs, abort: f }, opts.decision).then((d) => {
      if (guard.finish(f)) {
        sendAnswer(reply, () => {
          logDecision(request, body, d.code, d.reason, d)
          return answerWith(reply, 200, d.code, body)
        })
      }
    }, (err: unknown) => {
      if (guard.finish(f)) sendAnswer(reply, () => storeFailed(request, reply, body, err))
    })
  })
}
