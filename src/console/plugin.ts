// The operator console (docs/operations/console.md, contract §15): server-rendered pages under /admin/console
// on the admin listener. A person signs in with an admin key; the session (in the store: Redis, where every
// instance sees it, or this process's memory with the embedded store; behind an HttpOnly SameSite=Strict
// cookie, Secure under TLS) keeps the key's id and scopes, never the key, and ends after
// CONSOLE_IDLE_TIMEOUT_MS without a request or on sign-out. Sign-ins, refused sign-ins and sign-outs are in
// the audit trail. Every page and action checks the key's scope on the server, every form carries a CSRF
// token, and a Content-Security-Policy allows no inline script.
import { randomBytes } from 'node:crypto'
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifySession from '@fastify/session'
import fastifyCsrf from '@fastify/csrf-protection'
import fastifyHelmet from '@fastify/helmet'
import fastifyFormbody from '@fastify/formbody'
import fastifyMultipart from '@fastify/multipart'
import { auditAfterChange, auditContext } from '../http/admin-auth.js'
import type { KeyHolder } from '../access/keyring.js'
import { isScope, type Scope } from '../access/scopes.js'
import { BASE, page, type Flash, type Viewer } from './html.js'
import { sessionStoreFor } from './session-store.js'
import { sendHtml } from './respond.js'
import { REPORT_BYTES_MAX, SESSIONS_MAX } from './limits.js'
import { STYLE } from './style.js'
import type { ConsoleOptions } from './deps.js'
import { ErrorPage, SignInPage, type CertificateOffer } from './pages/sign-in.js'
import { certificateKey, peerFingerprint } from './certificate.js'
import { decisionPages } from './pages/decisions.js'
import { customerPages } from './pages/customers.js'
import { queuePages } from './pages/queues.js'
import { auditPages } from './pages/audit.js'
import { rulesPages } from './pages/rules.js'
import { backtestPages } from './pages/backtest.js'

declare module 'fastify' {
  interface Session {
    /** the id of the admin key signed in with (never the key) */
    keyId?: string
    /** that key's scopes at sign-in: the session never has more, and loses at once what the key loses */
    scopes?: string[]
    /** set when signed in with a client certificate: its SHA-256 fingerprint (nothing else of it) */
    certFingerprint?: string
    /** a message for the next page shown (after an action's redirect) */
    flash?: Flash
  }
  interface FastifyContextConfig {
    /** a console route open before sign-in (the sign-in page, the style sheet) */
    consolePublic?: boolean
  }
  interface FastifyRequest {
    /** the signed-in person of a console request */
    viewer?: Viewer
  }
}

export const COOKIE_NAME = 'extauth_console'

/** A local path of the console to go back to (never another host: `//evil` and `/\evil` are refused). */
export function safeNext (v: unknown): string {
  return typeof v === 'string' && v.startsWith(`${BASE}/`) && !/[\\\s]/.test(v) && !v.startsWith(`${BASE}//`) ? v : `${BASE}/decisions`
}

/** the key id of a refused sign-in's audit record: no key's (an id has no space), and nothing of what was typed */
export const UNKNOWN_KEY_ID = 'unknown key'

/**
 * The cookie's signature when sessions are shared: every instance must verify every other's cookie. It is
 * not what keeps a session: the id is 24 random bytes, and the store knows it only by its SHA-256.
 */
const SHARED_COOKIE_SECRET = 'extauth console: the session id is the secret, not this signature'

/** The session's key as it stands now: null when the key is gone; its scopes those it had at sign-in and still has. */
function sessionHolder (opts: ConsoleOptions, keyId: unknown, scopes: unknown): KeyHolder | null {
  if (typeof keyId !== 'string' || !Array.isArray(scopes)) return null
  const now = opts.keys.findId(keyId)
  if (now === null) return null
  const kept = new Set<Scope>(scopes.filter((s): s is Scope => isScope(s) && now.scopes.has(s)))
  return { id: now.id, scopes: kept }
}

export async function consolePlugin (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  const clock = opts.clock ?? Date.now
  const sessions = sessionStoreFor(opts.store, opts.idleTimeoutMs, opts.sessionsMax ?? SESSIONS_MAX, clock)
  const shared = opts.store.kind === 'redis'
  // pages, not API: left out of the admin API's OpenAPI document
  app.addHook('onRoute', (route) => { route.schema = { ...route.schema, hide: true } })

  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        // over plain HTTP an upgrade would send the forms to an https:// nobody listens on
        ...(opts.secure ? { upgradeInsecureRequests: [] } : {})
      }
    },
    strictTransportSecurity: opts.secure,
    referrerPolicy: { policy: 'same-origin' }
  })
  await app.register(fastifyCookie)
  await app.register(fastifySession, {
    // in this process only: a secret of its own each start is enough; shared: one every instance knows
    secret: shared ? SHARED_COOKIE_SECRET : randomBytes(32).toString('hex'),
    cookieName: COOKIE_NAME,
    store: sessions,
    saveUninitialized: false,
    rolling: true,
    cookie: { path: BASE, httpOnly: true, sameSite: 'strict', secure: opts.secure, maxAge: opts.idleTimeoutMs }
  })
  await app.register(fastifyCsrf, { sessionPlugin: '@fastify/session' })
  await app.register(fastifyFormbody, { bodyLimit: REPORT_BYTES_MAX })
  await app.register(fastifyMultipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: REPORT_BYTES_MAX, files: 1, fields: 10, fieldSize: REPORT_BYTES_MAX } })

  app.addHook('onRequest', async (_request, reply) => {
    // pages name customers and balances: no cache keeps them after sign-out
    reply.header('cache-control', 'no-store')
  })

  // who is looking, and may they: every route but the public ones, before its body is read (an upload of
  // someone not signed in is refused before it is taken in)
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.consolePublic === true) return
    let holder = sessionHolder(opts, request.session.get('keyId'), request.session.get('scopes'))
    const fingerprint = request.session.get('certFingerprint')
    if (holder !== null && typeof fingerprint === 'string') {
      // a certificate's session lasts while that certificate is still the one presented and is still mapped
      // to that key (SIGHUP may have taken the mapping or the key away)
      const mapped = peerFingerprint(request) === fingerprint ? opts.keys.findCertificate(fingerprint) : null
      if (mapped === null || mapped.id !== holder.id) holder = null
    }
    if (holder === null) {
      const ended = request.cookies[COOKIE_NAME] !== undefined
      if (request.method === 'GET') {
        const next = encodeURIComponent(request.url)
        return await reply.redirect(`${BASE}/sign-in?next=${next}${ended ? '&ended=1' : ''}`, 303)
      }
      // a POST without a session (expired, or sent from another site without the cookie): nothing runs
      return await sendHtml(reply, page({ title: 'Not signed in', section: 'none', viewer: null },
        ErrorPage({ title: 'Not signed in', text: 'This action was not carried out: there is no signed-in session (it may have ended after a time without activity). Sign in and try again.', signIn: true })), 401)
    }
    request.adminKey = holder
    request.viewer = { keyId: holder.id, scopes: holder.scopes, csrf: reply.generateCsrf() }
    const scope = request.routeOptions.config.scope
    if (scope === undefined || holder.scopes.has(scope)) return
    // the page did not offer it; the server refuses it anyway, and says so in the audit trail
    await auditAfterChange(opts.store, request, { outcome: 'refused', before: null, after: null })
    return await sendHtml(reply, page({ title: 'Not allowed', section: 'none', viewer: request.viewer },
      ErrorPage({ title: 'Not allowed', text: `The key ${holder.id} lacks the scope ${scope}: nothing was changed. Ask for a key with that scope.` })), 403)
  })
  // every form posts its token back: a form of another site has none
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'POST') { app.csrfProtection(request, reply, done); return }
    done()
  })

  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500
    if (status >= 500) request.log.error({ err }, 'console page failed')
    const csrf = typeof err.code === 'string' && err.code.startsWith('FST_CSRF')
    const text = csrf
      ? 'This form did not come from this console session (its token is missing or out of date): nothing was changed. Reload the page and try again.'
      : status === 413
        ? 'What was sent is too large.'
        : status < 500 ? err.message : `Something failed on the server and nothing more is known here; the log has it under request id ${request.id}.`
    return await sendHtml(reply, page({ title: 'Refused', section: 'none', viewer: request.viewer ?? null }, ErrorPage({ title: csrf ? 'Refused' : 'Error', text })), status)
  })

  app.setNotFoundHandler(async (request, reply) => {
    return await sendHtml(reply, page({ title: 'Not found', section: 'none', viewer: request.viewer ?? null },
      ErrorPage({ title: 'Not found', text: `There is no console page at ${request.url}.` })), 404)
  })

  app.get('/console.css', { config: { consolePublic: true } }, async (_request, reply) => {
    return await reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLE)
  })

  app.get('/', { config: { scope: 'read' } }, async (_request, reply) => await reply.redirect(`${BASE}/decisions`, 303))

  const clientCerts = opts.clientCerts === true
  /** what the sign-in page says of the client certificate: nothing without mTLS, else the key it maps to */
  const certificateOffer = (request: FastifyRequest): CertificateOffer => {
    if (!clientCerts) return null
    const mapped = certificateKey(request, opts.keys, true)
    return mapped === null ? { keyId: null } : { keyId: mapped.id }
  }

  const signIn = (request: FastifyRequest, holder: KeyHolder): void => {
    request.session.set('keyId', holder.id)
    request.session.set('scopes', [...holder.scopes].sort())
  }
  /**
   * A sign-in's audit record: the key's id, how, and the outcome. A refused one names no key and keeps nothing
   * of what was typed (not even a hash of it): its record says only that a sign-in was refused, and when.
   */
  const auditSignIn = async (request: FastifyRequest, holder: KeyHolder | null, via: 'key' | 'certificate', outcome: 'done' | 'refused'): Promise<void> => {
    request.adminKey = holder ?? { id: UNKNOWN_KEY_ID, scopes: new Set() }
    const ctx = { ...auditContext(request), target: { via } }
    await auditAfterChange(opts.store, request, { outcome, before: null, after: outcome === 'done' ? { signedIn: true } : null }, ctx)
    if (holder === null) delete request.adminKey
  }

  app.get<{ Querystring: { next?: string, ended?: string, out?: string } }>('/sign-in', { config: { consolePublic: true } }, async (request, reply) => {
    const q = request.query
    const note: Flash | null = q.ended === '1'
      ? { kind: 'error', text: `Your session has ended (after ${Math.round(opts.idleTimeoutMs / 60000)} minutes without activity, or the key is no longer valid). Sign in again.` }
      : q.out === '1' ? { kind: 'ok', text: 'You have signed out.' } : null
    return sendHtml(reply, page({ title: 'Sign in', section: 'sign-in', viewer: null, flash: note },
      SignInPage({ csrf: reply.generateCsrf(), next: safeNext(q.next), idleMinutes: Math.round(opts.idleTimeoutMs / 60000), certificate: certificateOffer(request) })))
  })

  app.post<{ Body: Record<string, unknown> }>('/sign-in', { config: { consolePublic: true } }, async (request, reply) => {
    const key = typeof request.body.key === 'string' ? request.body.key.trim() : ''
    const holder = key === '' ? null : opts.keys.find(key)
    const next = safeNext(request.body.next)
    if (holder === null) {
      request.log.warn({ ip: request.ip }, 'console sign-in refused: unknown key')
      await auditSignIn(request, null, 'key', 'refused')
      return sendHtml(reply, page({ title: 'Sign in', section: 'sign-in', viewer: null, flash: { kind: 'error', text: 'That key is not known. Nothing was signed in.' } },
        SignInPage({ csrf: reply.generateCsrf(), next, idleMinutes: Math.round(opts.idleTimeoutMs / 60000), certificate: certificateOffer(request) })), 401)
    }
    // a new session id at sign-in: one set before (by someone else) is worth nothing
    await request.session.regenerate()
    signIn(request, holder)
    request.log.info({ keyId: holder.id, ip: request.ip }, 'console sign-in')
    await auditSignIn(request, holder, 'key', 'done')
    return await reply.redirect(next, 303)
  })

  app.post<{ Body: Record<string, unknown> }>('/sign-in/certificate', { config: { consolePublic: true } }, async (request, reply) => {
    const mapped = certificateKey(request, opts.keys, clientCerts)
    const next = safeNext(request.body.next)
    if (mapped === null) {
      request.log.warn({ ip: request.ip }, 'console sign-in refused: no client certificate mapped to a key')
      await auditSignIn(request, null, 'certificate', 'refused')
      return sendHtml(reply, page({ title: 'Sign in', section: 'sign-in', viewer: null, flash: { kind: 'error', text: 'This connection has no client certificate mapped to a key. Nothing was signed in.' } },
        SignInPage({ csrf: reply.generateCsrf(), next, idleMinutes: Math.round(opts.idleTimeoutMs / 60000), certificate: certificateOffer(request) })), 401)
    }
    await request.session.regenerate()
    signIn(request, mapped)
    request.session.set('certFingerprint', mapped.fingerprint)
    request.log.info({ keyId: mapped.id, ip: request.ip, certFingerprint: mapped.fingerprint }, 'console sign-in')
    await auditSignIn(request, mapped, 'certificate', 'done')
    return await reply.redirect(next, 303)
  })

  // signed in is enough, whatever the key's scopes
  app.post('/sign-out', async (request, reply) => {
    request.log.info({ keyId: request.adminKey?.id }, 'console sign-out')
    await request.session.destroy()
    await auditAfterChange(opts.store, request, { outcome: 'done', before: { signedIn: true }, after: { signedIn: false } })
    reply.clearCookie(COOKIE_NAME, { path: BASE })
    return await reply.redirect(`${BASE}/sign-in?out=1`, 303)
  })

  await decisionPages(app, opts)
  await customerPages(app, opts)
  await queuePages(app, opts)
  await auditPages(app, opts)
  await rulesPages(app, opts)
  await backtestPages(app, opts)
}
