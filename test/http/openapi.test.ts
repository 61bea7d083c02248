// GET /admin/openapi.json and /admin/docs: a valid OpenAPI 3.1 document with every route both listeners
// registered, its answers matching what the routes really answer, and the reference served from the package.
import t from 'tap'
import { Ajv } from 'ajv'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/app.js'
import { ADMIN_TOKEN, adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { API_ERRORS } from '../../src/errors.js'
import { authRequestSchema } from '../../src/domain/auth-request-schema.js'
import { controlsSchema } from '../../src/controls/validate.js'

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }>, security?: unknown[] }
type Doc = { openapi: string, paths: Record<string, Record<string, Operation>> }

/** Every route Fastify registered, from its router's own listing (`printRoutes`), as [METHOD, url]. */
function registeredRoutes (app: FastifyInstance): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (m === null) continue
    const depth = (m[1] as string).length / 4
    stack.length = depth
    const path = (stack[depth - 1] ?? '') + (m[2] as string)
    stack[depth] = path
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '')) out.push([method, path])
  }
  return out
}

const asOpenApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

async function fetchDoc (adminApp: FastifyInstance): Promise<Doc> {
  const res = await adminApp.inject({ method: 'GET', url: '/admin/openapi.json', headers: adminHeaders })
  if (res.statusCode !== 200) throw new Error(`openapi.json: ${res.statusCode}`)
  return res.json()
}

t.test('the document is valid OpenAPI 3.1 and holds every route of both listeners', async (t) => {
  const { adminApp, publicApp } = await build(t)
  const doc = await fetchDoc(adminApp)
  const validator = new Validator()
  const result = await validator.validate(doc as unknown as Parameters<Validator['validate']>[0])
  t.same(result.errors ?? [], [], 'no validation errors')
  t.ok(result.valid, 'valid')
  t.match(doc.openapi, /^3\.1\./)

  // the reference's own pages and files are not API routes
  const isReference = (url: string): boolean => url === '/admin/docs' || url.startsWith('/admin/docs/')
  let checked = 0
  for (const [listener, app] of [['public', publicApp], ['admin', adminApp]] as const) {
    const routes = registeredRoutes(app).filter(([method, url]) => method !== 'HEAD' && !isReference(url))
    t.ok(routes.length > (listener === 'public' ? 2 : 25), `${listener}: the router listing was read (${routes.length} routes)`)
    for (const [method, url] of routes) {
      const op = doc.paths[asOpenApiPath(url)]?.[method.toLowerCase()]
      t.ok(op !== undefined, `${listener}: ${method} ${url} is in the document`)
      if (op === undefined) continue
      checked++
      t.ok(Object.keys(op.responses).some((s) => /^2/.test(s)), `${method} ${url}: its success answer is described`)
      if (listener === 'admin' && url !== '/metrics') {
        t.ok(op.responses[String(API_ERRORS.UNAUTHORIZED)] !== undefined, `${method} ${url}: 401 without the token`)
      }
    }
  }
  t.ok(checked > 30)
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
  const registered = new Set([...registeredRoutes(publicApp), ...registeredRoutes(adminApp)].map(([m, u]) => `${m} ${asOpenApiPath(u)}`))
  t.same(documented.filter((r) => !registered.has(r)), [], 'nothing documented that is not served')
  t.notOk(registeredRoutes(publicApp).some(([, url]) => url.includes('openapi') || isReference(url)), 'the public listener serves no document')
})

t.test('the request schemas are the ones the routes validate with', async (t) => {
  const { adminApp } = await build(t)
  const doc = await fetchDoc(adminApp) as unknown as { paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>> }
  const body = (path: string, method: string): unknown => doc.paths[path]?.[method]?.requestBody.content['application/json']?.schema
  // the whole-request example is the media type's in the document (below), not the schema's
  const withoutExample = ({ examples: _e, ...schema }: { examples?: unknown }): unknown => schema
  t.same(body('/api/v1/externalAuth', 'post'), withoutExample(authRequestSchema))
  t.same(body('/admin/v1/customers/{urn}/cards/{last4}/controls', 'patch'), withoutExample(controlsSchema))
})

type Schema = { properties?: Record<string, Schema>, description?: string }
type Parameter = { name: string, in: string, description?: string }
type RequestOperation = { parameters?: Parameter[], requestBody?: { content: Record<string, { schema: Schema, example?: unknown }> } }

/** the dotted names of the properties, at any depth, that have no description */
function undescribed (schema: Schema, at = ''): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, p]) =>
    [...(typeof p.description === 'string' && p.description !== '' ? [] : [`${at}${name}`]), ...undescribed(p, `${at}${name}.`)])
}

t.test('every request body has a whole example that its schema accepts, and every field and parameter a description', async (t) => {
  const { adminApp } = await build(t)
  const doc = await fetchDoc(adminApp) as unknown as { paths: Record<string, Record<string, RequestOperation>> }
  const ajv = new Ajv({ strict: false, allowUnionTypes: true })
  let bodies = 0
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const route = `${method.toUpperCase()} ${path}`
      for (const p of op.parameters ?? []) t.ok(p.description, `${route}: ${p.in} parameter ${p.name} is described`)
      const media = op.requestBody?.content['application/json']
      if (media === undefined) continue
      bodies++
      t.same(undescribed(media.schema), [], `${route}: every field of the body is described`)
      t.ok(media.example !== undefined && media.example !== null, `${route}: the body has an example`)
      if (media.example === undefined) continue
      t.ok(ajv.validate(media.schema, media.example), `${route}: the example is a valid body ${JSON.stringify(ajv.errors)}`)
    }
  }
  t.ok(bodies >= 15, `every body was read (${bodies})`)
})

t.test('each route takes its own example as it stands, up to the upstream (no party configured here)', async (t) => {
  const { adminApp, publicApp } = await build(t)
  const doc = await fetchDoc(adminApp) as unknown as { paths: Record<string, Record<string, RequestOperation>> }
  const loads = doc.paths['/v1/loads']?.post?.requestBody?.content['application/json']?.example as Record<string, unknown>
  // the card-lifecycle calls need their parties; without them the example passes validation and meets 503
  const res = await adminApp.inject({ method: 'POST', url: '/v1/loads', headers: adminHeaders, payload: loads })
  t.equal(res.statusCode, 503, `the load example passes the route's validation ${res.body}`)
  const unload = doc.paths['/v1/unloads']?.post?.requestBody?.content['application/json']?.example as Record<string, unknown>
  const u = await adminApp.inject({ method: 'POST', url: '/v1/unloads', headers: adminHeaders, payload: unload })
  t.equal(u.statusCode, 503, `the unload example passes the route's strict validation ${u.body}`)
  const auth = doc.paths['/api/v1/externalAuth']?.post?.requestBody?.content['application/json']?.example as Record<string, unknown>
  const a = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: auth })
  t.match(a.json(), { responseCode: '14' }, 'the External Authorization example is decided (an unknown customer here)')
})

t.test('the answers are as the document describes them', async (t) => {
  const { adminApp, publicApp } = await build(t)
  const doc = await fetchDoc(adminApp)
  const ajv = new Ajv({ strict: false })
  const conforms = async (app: FastifyInstance, method: string, url: string, path: string, payload?: unknown, headers: Record<string, string> = adminHeaders): Promise<number> => {
    const res = await app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) })
    const responses = doc.paths[path]?.[method.toLowerCase()]?.responses ?? {}
    const described = responses[String(res.statusCode)] ?? responses[`${String(res.statusCode)[0]}XX`]
    t.ok(described !== undefined, `${method} ${url}: status ${res.statusCode} is described`)
    const schema = described?.content?.['application/json']?.schema
    if (schema !== undefined) {
      const ok = ajv.validate(schema, res.json())
      t.ok(ok, `${method} ${url} ${res.statusCode}: the answer matches its schema ${JSON.stringify(ajv.errors)} ${res.body}`)
    }
    return res.statusCode
  }
  const c = '/admin/v1/customers/{urn}'
  t.equal(await conforms(adminApp, 'GET', '/admin/v1/customers/OAPI1', c), 404)
  t.equal(await conforms(adminApp, 'PUT', '/admin/v1/customers/OAPI1', c, { customerId: 'C1' }), 200)
  t.equal(await conforms(adminApp, 'PUT', '/admin/v1/customers/OAPI1', c, { nickname: 'x' }), 400, 'an unknown field')
  t.equal(await conforms(adminApp, 'PUT', '/admin/v1/customers/OAPI1/cards/4321', `${c}/cards/{last4}`, { status: 'ACTIVE' }), 200)
  t.equal(await conforms(adminApp, 'POST', '/admin/v1/customers/OAPI1/credits', `${c}/credits`, { amount: '50000', reference: 'c1' }), 200)
  t.equal(await conforms(adminApp, 'POST', '/admin/v1/customers/OAPI1/debits', `${c}/debits`, { amount: 900000, reference: 'd1' }), 409)
  t.equal(await conforms(adminApp, 'GET', '/admin/v1/customers/OAPI1', c), 200)
  const controls = `${c}/cards/{last4}/controls`
  t.equal(await conforms(adminApp, 'PATCH', '/admin/v1/customers/OAPI1/cards/4321/controls', controls, { ATM: { dailyMax: 1000 } }), 200)
  t.equal(await conforms(adminApp, 'PATCH', '/admin/v1/customers/OAPI1/cards/4321/controls', controls, { ATM: { dailyMax: '1000' } }), 400)
  t.equal(await conforms(adminApp, 'GET', '/admin/v1/rules', '/admin/v1/rules'), 200)
  t.equal(await conforms(adminApp, 'GET', '/admin/v1/customers/OAPI1', c, undefined, { authorization: 'Bearer wrong' }), 401)
  t.equal(await conforms(adminApp, 'GET', '/v1/transfers/T1', '/v1/transfers/{id}'), 503, 'an adapter not configured')
  t.equal(await conforms(publicApp, 'GET', '/health/live', '/health/live'), 200)
  t.equal(await conforms(publicApp, 'POST', '/api/v1/externalAuth', '/api/v1/externalAuth', authBody({ urn: 'OAPI1' }), platformHeaders()), 200)
  t.equal(await conforms(publicApp, 'POST', '/api/v1/externalAuth', '/api/v1/externalAuth', { urn: 5 }, platformHeaders()), 400)
})

t.test('the document and the reference need the admin token; the reference takes it as a browser password', async (t) => {
  const { adminApp } = await build(t)
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/openapi.json' })).statusCode, 401)
  const page = await adminApp.inject({ method: 'GET', url: '/admin/docs' })
  t.equal(page.statusCode, 401)
  t.match(page.headers['www-authenticate'], /^Basic /, 'a browser asks for the password')
  const basic = (password: string): string => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/docs/json', headers: { authorization: basic('wrong') } })).statusCode, 401)
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/openapi.json', headers: { authorization: basic(ADMIN_TOKEN) } })).statusCode, 401,
    'the password form is for the reference only')
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/rules', headers: { authorization: basic(ADMIN_TOKEN) } })).statusCode, 401)

  const auth = { authorization: basic(ADMIN_TOKEN) }
  const index = await adminApp.inject({ method: 'GET', url: '/admin/docs', headers: auth })
  t.equal(index.statusCode, 200)
  t.match(index.headers['content-type'], /text\/html/)
  const assets = [...index.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
  t.ok(assets.length > 0)
  t.same(assets.filter((a) => /^(https?:)?\/\//.test(a)), [], 'no asset from another host')
  for (const a of assets.filter((x) => /\.(js|css)$/.test(x))) {
    const res = await adminApp.inject({ method: 'GET', url: new URL(a, 'http://h/admin/docs').pathname, headers: auth })
    t.equal(res.statusCode, 200, `${a} is served from the package`)
  }
  const json = await adminApp.inject({ method: 'GET', url: '/admin/docs/json', headers: auth })
  t.same(json.json(), await fetchDoc(adminApp), 'the reference renders the same document')
})
