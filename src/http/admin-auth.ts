// Who may call the admin listener (docs/operations/admin-access.md): a bearer key of ADMIN_TOKEN or
// ADMIN_KEYS_FILE, and the scope the route declares in its options (`config: { scope }`). Every route
// registered here must declare one: a route without is a programmer error that stops the app's build.
// Unknown key: 401. Known key without the scope: 403 FORBIDDEN naming it, and an audit record `refused`.
// Card-lifecycle routes declare `auditAfter` (the body's id fields): their call is audited once answered.
import assert from 'node:assert'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AuditContext, AuditRecord } from '../domain/audit.js'
import type { Keyring, KeyHolder } from '../access/keyring.js'
import { isScope, type Scope } from '../access/scopes.js'
import type { Store } from '../store/types.js'
import { API_ERRORS, errorBody } from '../errors.js'
import { DOCS_PREFIX } from './openapi.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** the scope of the routes a plugin registers in this context without one of their own (the API reference's) */
    adminScope?: Scope
  }
  interface FastifyContextConfig {
    /** the scope an admin key needs for this route */
    scope?: Scope
    /** audit the call once answered, with these body fields (ids only) as its target */
    auditAfter?: readonly string[]
  }
  interface FastifyRequest {
    /** the admin key of the call (its id and scopes; never the key) */
    adminKey?: KeyHolder
  }
}

export interface AdminAuthOptions {
  keys: Keyring
  store: Store
  /** told every route registered and the scope it declares (the listener's table of routes and scopes) */
  routes?: RouteScope[]
}

export interface RouteScope { method: string, url: string, scope: Scope }

function isDocsPath (url: string): boolean {
  const path = url.split('?', 1)[0] as string
  return path === DOCS_PREFIX || path.startsWith(`${DOCS_PREFIX}/`)
}

/**
 * The key a request presents: `Bearer <key>`, or for the rendered API reference only (opened in a browser,
 * which can send a password but no bearer token) `Basic` with the key as the password.
 */
function presentedKey (header: string | undefined, docs: boolean): string {
  if (typeof header !== 'string') return ''
  if (header.startsWith('Bearer ')) return header.slice(7)
  if (!docs || !header.startsWith('Basic ')) return ''
  const pair = Buffer.from(header.slice(6), 'base64').toString('utf8')
  const colon = pair.indexOf(':')
  return colon < 0 ? '' : pair.slice(colon + 1)
}

/** the value a target field may carry: an id, a status word or an amount, never free text */
const TARGET_VALUE = /^[A-Za-z0-9._-]{1,64}$/

function targetOf (request: FastifyRequest, fields: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {}
  const take = (source: unknown, names: readonly string[] | null): void => {
    if (source === null || typeof source !== 'object') return
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      if (names !== null && !names.includes(k)) continue
      const s = typeof v === 'number' ? String(v) : v
      if (typeof s === 'string' && TARGET_VALUE.test(s)) out[k] = s
    }
  }
  // route parameters are ids by the routes' own schemas (urn, last4, ref, id, pgTransactionId)
  take(request.params, null)
  take(request.body, fields)
  return out
}

/** What the audit record of this call starts from; `extra` adds ids the body carries (reference, amount). */
export function auditContext (request: FastifyRequest, extra: Record<string, string> = {}): AuditContext {
  const key = request.adminKey
  assert(key !== undefined, 'auditContext: the call has no admin key (a route outside adminAuth)')
  return {
    id: randomUUID(),
    keyId: key.id,
    route: `${request.method} ${request.routeOptions.url ?? request.url}`,
    scope: request.routeOptions.config.scope ?? '',
    requestId: request.id,
    target: { ...targetOf(request), ...extra }
  }
}

/**
 * Writes the audit record of a change that was not one store script, right after it. A record that cannot
 * be written is logged whole (at error) rather than failing a call whose change stands.
 */
export async function auditAfterChange (store: Store, request: FastifyRequest, record: Pick<AuditRecord, 'outcome' | 'before' | 'after'>, ctx = auditContext(request)): Promise<void> {
  const full = { ...ctx, ...record }
  try {
    await store.appendAudit(full)
  } catch (err) {
    request.log.error({ audit: full, err: (err as Error).message }, 'audit record not written')
  }
}

export async function adminAuth (app: FastifyInstance, opts: AdminAuthOptions): Promise<void> {
  app.addHook('onRoute', function (route) {
    const config = (route.config ?? {}) as { scope?: unknown }
    // a route a plugin registers (the API reference's files) takes the scope its context declares
    if (config.scope === undefined && this.adminScope !== undefined) route.config = { ...config, scope: this.adminScope }
    const scope = (route.config as { scope?: unknown } | undefined)?.scope
    assert(isScope(scope), `admin route ${String(route.method)} ${route.url} declares no scope (config: { scope })`)
    for (const method of [route.method].flat()) opts.routes?.push({ method, url: route.url, scope })
  })

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    const docs = isDocsPath(request.url)
    const presented = presentedKey(request.headers.authorization, docs)
    const holder = opts.keys.find(presented)
    if (holder === null) {
      // a browser asks for a user name and password: the key is the password
      if (docs) reply.header('www-authenticate', 'Basic realm="extauth admin", charset="UTF-8"')
      // the key itself is never repeated: only that one came and was not recognised
      const message = presented === ''
        ? 'no admin key: send Authorization: Bearer <admin key>'
        : 'admin key not recognised: send ADMIN_TOKEN or a key of ADMIN_KEYS_FILE as Authorization: Bearer <admin key>'
      return await reply.code(API_ERRORS.UNAUTHORIZED).send(errorBody('UNAUTHORIZED', message))
    }
    request.adminKey = holder
    // no scope: no route matched, and the not-found answer follows
    const scope = request.routeOptions.config.scope
    if (scope === undefined || holder.scopes.has(scope)) return
    await auditAfterChange(opts.store, request, { outcome: 'refused', before: null, after: null })
    return await reply.code(API_ERRORS.FORBIDDEN).send({ ...errorBody('FORBIDDEN', `key ${holder.id} lacks the scope ${scope}`), scope })
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const fields = request.routeOptions.config.auditAfter
    if (fields === undefined || request.adminKey === undefined || reply.statusCode === API_ERRORS.FORBIDDEN) return payload
    let answer: Record<string, unknown> = {}
    try {
      answer = JSON.parse(String(payload)) as Record<string, unknown>
    } catch {}
    const status = typeof answer.status === 'string' && TARGET_VALUE.test(answer.status) ? answer.status : null
    // an answer without a status word is an error answer (bad input, conflict, not configured): nothing ran
    if (status === null) return payload
    await auditAfterChange(opts.store, request, { outcome: status, before: null, after: { status, replayed: answer.replayed === true } },
      { ...auditContext(request), target: targetOf(request, fields) })
    return payload
  })
}
