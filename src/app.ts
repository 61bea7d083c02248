// Builds the two Fastify instances from their dependencies, without listening: the public listener (the
// platform's endpoint and health) and the admin listener (admin and card-lifecycle APIs, metrics).
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger } from 'fastify'
import underPressure from '@fastify/under-pressure'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import type { Store } from './store/types.js'
import type { Metrics } from './metrics.js'
import type { StoreProblem } from './store-status.js'
import { withIsoTimes } from './http/iso-times.js'
import type { Compensator } from './decision/compensator.js'
import type { RiskLookup } from './decision/pipeline.js'
import { externalAuthRoutes, EXTERNAL_AUTH_PATH } from './http/external-auth-route.js'
import { systemTimers, type Timers } from './decision/deadline.js'
import { healthRoutes } from './http/health-routes.js'
import { adminRoutes, schemaErrors, type RulesControl } from './http/admin-routes.js'
import { eventsRoutes } from './http/events-routes.js'
import { journalRoutes } from './http/journal-routes.js'
import { journalFor } from './journal/for-store.js'
import { adminAuth, type RouteScope } from './http/admin-auth.js'
import { auditRoutes } from './http/audit-routes.js'
import { auditTrailFor } from './access/audit-trail.js'
import type { Relay } from './events/relay.js'
import { answerFor, type AnswerContext } from './http/answer.js'
import { apiDocument, apiDocsRoutes, TAGS } from './http/openapi.js'
import { lifecycleRoutes, type LifecycleOptions } from './http/lifecycle-routes.js'
import { controlsRoutes } from './http/controls-routes.js'
import { clientErrorHandler, trackEarlyAnswers } from './http/client-errors.js'
import { observeConnections } from './http/connection-metrics.js'
import { strictBodies } from './strict-ajv.js'
import type { StandIn } from './standin/stand-in.js'
import { standInRoutes } from './http/standin-routes.js'
import { consolePlugin } from './console/plugin.js'
import { standInSection } from './console/standin-section.js'
import { reconciliationSection } from './console/pages/reconciliation.js'
import { settlementFor } from './settlement/for-store.js'
import { API_ERRORS, errorBody } from './errors.js'
import { holdExpiryFor, settlementRoutes } from './http/settlement-routes.js'

export interface AppDeps {
  config: Config
  store: Store
  rules: RulesControl
  metrics: Metrics
  logger: Logger
  compensator: Compensator
  risk?: RiskLookup
  clock?: () => number
  /** the deadline guard's timers (fake ones in tests, with a faked Date.now); `clock` is the answers' clock */
  timers?: Timers
  /** the card-lifecycle services of the configured adapters (README "Card lifecycle API") */
  cardLifecycle?: Omit<LifecycleOptions, 'defaultCurrency'>
  /** the events relay, when WEBHOOK_URL is set (its parked events are served on the admin listener) */
  events?: Relay
  /** set when SIGTERM arrives: readiness turns 503 so the load balancer drains the instance */
  shutdown: { started: boolean }
  /** which Redis does not answer and why, for the log line of a store error */
  storeProblem?: () => StoreProblem | null
  /** deciding while the store is unreachable (STANDIN_POLICY_FILE) */
  standIn?: StandIn
}

/**
 * Once the process is stopping, every answer closes its connection. close() only closes the keep-alive
 * connections idle at that moment; one busy with a request in flight would stay open after its answer
 * until the client let go (keepAliveTimeout: HTTP_KEEP_ALIVE_TIMEOUT_MS on the public listener, 72 s on the
 * admin one), holding the exit past GRACE_MS (exit code 1).
 */
function closeConnectionsWhenStopping (app: FastifyInstance, shutdown: { started: boolean }): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shutdown.started) reply.header('connection', 'close')
    done(null, payload)
  })
}

/**
 * A connection that has not sent a byte carries no request to answer, and close() leaves it open: Node counts it
 * neither idle nor expired. A client's or a load balancer's spare connection (opened ahead of need) would then
 * hold the exit until GRACE_MS runs out (exit code 1). Closing starts by dropping those.
 */
function closeUnusedConnectionsOnClose (app: FastifyInstance): void {
  const open = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    open.add(socket)
    socket.once('close', () => open.delete(socket))
  })
  app.addHook('preClose', (done) => {
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy()
    done()
  })
}

function answerContext (deps: AppDeps): AnswerContext {
  return { timezone: deps.config.timezone, defaultCurrency: deps.config.defaultCurrency, clock: deps.clock ?? Date.now }
}

/** The public listener's routes: the platform's endpoint and health (also registered, never served, for the API document). */
async function publicRoutes (app: FastifyInstance, deps: AppDeps, answerCtx: AnswerContext): Promise<void> {
  const { config, metrics } = deps
  const clock = answerCtx.clock
  await app.register(externalAuthRoutes, {
    deadlineMs: config.deadlineMs,
    headers: { consumerKey: config.consumerKey, clientId: config.clientId, bankId: config.bankId, entityIds: config.entityIds },
    allowedSourceIps: config.allowedSourceIps,
    answer: answerCtx,
    metrics,
    clock: { now: () => Date.now(), timers: deps.timers ?? systemTimers },
    ...(deps.storeProblem !== undefined ? { storeProblem: deps.storeProblem as () => Record<string, string> | null } : {}),
    decision: {
      store: deps.store,
      rules: deps.rules.current,
      timezone: config.timezone,
      defaultCurrency: config.defaultCurrency,
      clock,
      compensator: deps.compensator,
      controlDefaults: config.cardControlDefaults,
      ...(config.settlement?.mode === 'holds' ? { holdExpiry: holdExpiryFor(config.settlement) } : {}),
      ...(deps.risk !== undefined ? { risk: deps.risk } : {}),
      ...(deps.standIn !== undefined ? { standIn: deps.standIn } : {})
    }
  })
  const standIn = deps.standIn
  await app.register(healthRoutes, {
    store: deps.store,
    ...(standIn !== undefined ? { standInReady: () => standIn.canDecide } : {}),
    rulesLoaded: () => deps.rules.loadedAt() !== null,
    shuttingDown: () => deps.shutdown.started
  })
}

/**
 * Fastify's trustProxy for TRUST_PROXY. A hop count becomes proxy-addr's hop trust (the n nearest
 * addresses are proxies, so the source is the address the outermost of them added to X-Forwarded-For):
 * Fastify 5 takes a number as "trust no proxy".
 */
export function trustProxyOf (v: boolean | number | string): boolean | string | ((addr: string, hop: number) => boolean) {
  if (typeof v !== 'number') return v
  return (_addr, hop) => hop < v
}

export async function buildPublicApp (deps: AppDeps): Promise<FastifyInstance> {
  const { config, metrics } = deps
  const answerCtx = answerContext(deps)
  // one warning a second at most while shedding: a line per shed request would add to the overload
  let shedSince = 0
  let shedCount = 0
  const noteShed = (cause: string): void => {
    shedCount++
    const now = Date.now()
    if (now - shedSince >= 1000) {
      deps.logger.warn({ cause, shed: shedCount }, 'overloaded: answering 05 without a decision')
      shedSince = now
      shedCount = 0
    }
  }
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // one log line per decision, written by the route, instead of Fastify's two per request
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustProxyOf(config.trustProxy),
    bodyLimit: 16 * 1024,
    // while closing, requests already on a connection are still answered (the platform must get an answer)
    return503OnClosing: false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A slow sender must not hold a socket for Node's defaults (60 s for headers, 5 min for a request):
    // nothing that arrives later than the platform's budget can still be answered in time.
    requestTimeout: config.httpRequestTimeoutMs,
    keepAliveTimeout: config.httpKeepAliveTimeoutMs,
    http: {
      headersTimeout: config.httpHeadersTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default)
      connectionsCheckingInterval: Math.max(50, Math.floor(config.httpHeadersTimeoutMs / 4)),
      maxHeaderSize: 16 * 1024
    },
    clientErrorHandler: clientErrorHandler(answerCtx, metrics, deps.logger)
  })
  closeConnectionsWhenStopping(app, deps.shutdown)
  closeUnusedConnectionsOnClose(app)
  observeConnections(app, metrics)
  trackEarlyAnswers(app)

  await app.register(underPressure, {
    ...(config.shedEventLoopDelayMs > 0 ? { maxEventLoopDelay: config.shedEventLoopDelayMs } : {}),
    ...(config.shedHeapUsedBytes > 0 ? { maxHeapUsedBytes: config.shedHeapUsedBytes } : {}),
    // A sample interval with no event-loop sample at all counts as infinite delay; at 250 ms only a loop
    // really stalled that long sheds, where 100 ms shed after short hiccups too.
    sampleInterval: 250,
    pressureHandler: (request, reply, type) => {
      // only the decision route is shed; health and other routes go on (readiness reports the pressure)
      if (request.routeOptions.url !== EXTERNAL_AUTH_PATH) return undefined
      metrics.shed.inc({ cause: String(type) })
      noteShed(String(type))
      reply.code(200)
      // a returned value is sent as the answer and the request goes no further (under-pressure's contract)
      return answerFor('05', undefined, answerCtx) as unknown as undefined
    }
  })

  await publicRoutes(app, deps, answerCtx)
  app.setNotFoundHandler(async (_request, reply) => {
    reply.code(404)
    return { error: 'NOT_FOUND', message: 'no such route' }
  })
  return app
}

/**
 * Health asked of the admin listener, where it is not served (a load balancer or a person on the wrong port):
 * a plain 404 saying where it is, answered before any key is asked for (not a 401 that sends them looking for one).
 */
export const ADMIN_HEALTH_POINTERS = ['/health', '/health/*'] as const

function pointToPublicHealth (app: FastifyInstance, config: Config): void {
  const message = `health is served by the public listener (PORT ${config.port}), not by this admin listener (ADMIN_PORT ${config.adminPort}): ` +
    `GET ${config.publicUrl}/health/live and ${config.publicUrl}/health/ready`
  for (const url of ADMIN_HEALTH_POINTERS) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => await reply.code(API_ERRORS.NOT_FOUND).send(errorBody('NOT_FOUND', message)))
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the admin listener's routes and the scope each needs (all but /metrics) */
    routeScopes?: readonly RouteScope[]
  }
}

export async function buildAdminApp (deps: AppDeps, extra?: (app: FastifyInstance) => Promise<void>): Promise<FastifyInstance> {
  const tls = deps.config.adminTls
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // a request id unique across instances and restarts: the audit trail names calls by it
    genReqId: () => randomUUID(),
    // ADMIN_TLS_*: HTTPS, and with a CA only clients with a certificate it signed get past the handshake
    ...(tls !== undefined ? { https: { cert: tls.cert, key: tls.key, ...(tls.ca !== undefined ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) } } : {}),
    bodyLimit: 64 * 1024,
    // every body (admin, card controls, card lifecycle) as it was sent: `{"amount": [5]}` is refused, not
    // read as 5; an unknown field is a mistake to report, not to drop silently
    schemaController: { compilersFactory: { buildValidator: strictBodies } },
    schemaErrorFormatter: schemaErrors,
    ajv: { customOptions: { removeAdditional: false } }
  })
  closeConnectionsWhenStopping(app, deps.shutdown)
  closeUnusedConnectionsOnClose(app)
  // `curl -H 'content-type: application/json' -X POST .../rules/reload` sends no body: take it as none
  const jsonParser = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString()
    if (text === '') { done(null, null); return }
    // the default parser answers through `done` and returns nothing; its type also allows the promise form
    void jsonParser(request, text, done)
  })
  // instants as ISO 8601 beside the epoch-ms fields of every JSON answer (http/iso-times.ts)
  app.addHook('preSerialization', async (_request, _reply, payload) => withIsoTimes(payload))
  // before any route: the document is made from the routes as they are registered
  const answerCtx = answerContext(deps)
  await apiDocument(app, {
    publicRoutes: async (twin) => { await publicRoutes(twin, deps, answerCtx) },
    publicUrl: deps.config.publicUrl,
    docsBaseUrl: deps.config.docsBaseUrl
  })
  app.get('/metrics', {
    schema: {
      tags: [TAGS.operations],
      summary: 'Prometheus metrics (no token needed)',
      security: [],
      answers: { 200: { description: 'the Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } }
    }
  }, async (_request, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType)
    return await deps.metrics.registry.metrics()
  })
  pointToPublicHealth(app, deps.config)
  const routeScopes: RouteScope[] = []
  app.decorate('routeScopes', routeScopes)
  await app.register(async (scope) => {
    // first: every route below declares its scope, and every call is checked against it
    await adminAuth(scope, { keys: deps.config.adminKeys, store: deps.store, routes: routeScopes })
    await adminRoutes(scope, { store: deps.store, rules: deps.rules })
    await controlsRoutes(scope, { store: deps.store, defaults: deps.config.cardControlDefaults })
    await lifecycleRoutes(scope, { ...deps.cardLifecycle, defaultCurrency: deps.config.defaultCurrency })
    await eventsRoutes(scope, { store: deps.store, ...(deps.events !== undefined ? { relay: deps.events } : {}) })
    await standInRoutes(scope, { store: deps.store, ...(deps.standIn !== undefined ? { standIn: deps.standIn } : {}) })
    const journal = journalFor(deps.store)
    if (journal !== null) await journalRoutes(scope, { journal })
    await settlementRoutes(scope, { store: deps.store, maps: deps.config.settlement?.maps ?? {}, ...(deps.config.settlement !== undefined ? { graceMs: deps.config.settlement.graceMs } : {}), registry: deps.metrics.registry })
    const trail = auditTrailFor(deps.store)
    if (trail !== null) await auditRoutes(scope, { trail })
    // the API reference and its files: read scope
    await scope.register(async (docs) => {
      docs.decorate('adminScope', 'read')
      await apiDocsRoutes(docs)
    })
    if (extra !== undefined) await extra(scope)
  })
  // the operator console: its own sign-in, session, CSRF and security headers, beside the bearer-key API
  await app.register(consolePlugin, {
    prefix: '/admin/console',
    keys: deps.config.adminKeys,
    store: deps.store,
    rules: deps.rules,
    rulesDir: deps.config.rulesDir,
    journal: journalFor(deps.store),
    audit: auditTrailFor(deps.store),
    ...(deps.events !== undefined ? { relay: deps.events } : {}),
    metrics: deps.metrics,
    controlDefaults: deps.config.cardControlDefaults,
    defaultCurrency: deps.config.defaultCurrency,
    idleTimeoutMs: deps.config.consoleIdleTimeoutMs,
    secure: tls !== undefined,
    clientCerts: tls?.ca !== undefined,
    queueSections: [reconciliationSection(settlementFor(deps.store)), ...(deps.standIn !== undefined ? [standInSection(deps.standIn)] : [])],
    ...(deps.clock !== undefined ? { clock: deps.clock } : {})
  })
  return app
}
