// GET /admin/openapi.json and /admin/docs: a valid OpenAPI 3.1 document with every route both listeners
// registered, its answers matching what the routes really answer, and the reference served from the package.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { Ajv } from 'ajv'
import { request } from 'undici'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/app.js'
import { ADMIN_HEALTH_POINTERS } from '../../src/app.js'
import { ADMIN_TOKEN, adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { API_ERRORS } from '../../src/errors.js'
import { authRequestSchema } from '../../src/domain/auth-request-schema.js'
import { controlsSchema } from '../../src/controls/validate.js'
import { FAVICON_SVG, LOGO_SVG, REFERENCE_TITLE } from '../../src/http/brand.js'
import { freePort } from '../../scripts/lib/free-port.js'

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

  // the reference's own pages and files, and the operator console's pages, are not API routes
  const isReference = (url: string): boolean => url === '/admin/docs' || url.startsWith('/admin/docs/') || url === '/admin/console' || url.startsWith('/admin/console/')
  let checked = 0
  for (const [listener, app] of [['public', publicApp], ['admin', adminApp]] as const) {
    // on the admin listener, /health answers only where health is (a 404 naming the public listener): no API route
    const isHealthPointer = (url: string): boolean => listener === 'admin' && ADMIN_HEALTH_POINTERS.some((p) => url.startsWith(p.replace('/*', '')))
    const routes = registeredRoutes(app).filter(([method, url]) => method !== 'HEAD' && !isReference(url) && !isHealthPointer(url))
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
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).filter((k) => k !== 'servers').map((m) => `${m.toUpperCase()} ${p}`))
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

/** Where the reference sends an operation of `path`: its path item's server, else the document's, resolved against the document's own URL. */
function tryItOutUrl (doc: { servers?: Array<{ url: string }>, paths: Record<string, { servers?: Array<{ url: string }> }> }, path: string, documentUrl: string): URL {
  const server = doc.paths[path]?.servers?.[0]?.url ?? doc.servers?.[0]?.url ?? '/'
  return new URL(`${server.replace(/\/$/, '')}${path}`, documentUrl)
}

t.test('"Try it out" sends each route to the listener that serves it', async (t) => {
  const publicPort = await freePort()
  const { adminApp, publicApp } = await build(t, { env: { HOST: '127.0.0.1', PORT: String(publicPort) } })
  await publicApp.listen({ host: '127.0.0.1', port: publicPort })
  const adminUrl = await adminApp.listen({ host: '127.0.0.1', port: 0 })
  const documentUrl = `${adminUrl}/admin/docs/json`
  const doc = (await request(documentUrl, { headers: adminHeaders }).then(async (r) => await r.body.json())) as Parameters<typeof tryItOutUrl>[0]
  for (const path of ['/health/live', '/health/ready']) {
    const url = tryItOutUrl(doc, path, documentUrl)
    t.equal(url.port, String(publicPort), `${path}: to the public listener`)
    t.equal((await request(url)).statusCode, 200, `${path}: answered there`)
  }
  const auth = tryItOutUrl(doc, '/api/v1/externalAuth', documentUrl)
  const res = await request(auth, { method: 'POST', headers: platformHeaders(), body: JSON.stringify(authBody({ urn: 'OAPI-TRY' })) })
  t.match(await res.body.json(), { responseCode: '14' }, 'the External Authorization call: to the public listener, and decided there')
  const rules = tryItOutUrl(doc, '/admin/v1/rules', documentUrl)
  t.equal(rules.origin, adminUrl, 'an admin route: to the admin listener')
  t.equal((await request(rules, { headers: adminHeaders })).statusCode, 200)

  const elsewhere = await build(t, { env: { PUBLIC_URL: 'https://auth.example.test/extauth/' } })
  const other = (await elsewhere.adminApp.inject({ method: 'GET', url: '/admin/openapi.json', headers: adminHeaders })).json() as Parameters<typeof tryItOutUrl>[0]
  t.equal(tryItOutUrl(other, '/api/v1/externalAuth', 'http://127.0.0.1:8081/admin/docs/json').href, 'https://auth.example.test/extauth/api/v1/externalAuth', 'PUBLIC_URL names the public listener as clients reach it')
})

t.test('the reference is extauth\'s: its title, its mark, nothing from another host', async (t) => {
  const { adminApp } = await build(t)
  const basic = { authorization: `Basic ${Buffer.from(`operator:${ADMIN_TOKEN}`).toString('base64')}` }
  const index = await adminApp.inject({ method: 'GET', url: '/admin/docs/', headers: basic })
  t.match(index.body, `<title>${REFERENCE_TITLE}</title>`)
  t.notMatch(index.body, /Swagger UI<\/title>/, 'not Swagger UI\'s default title')
  const icon = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(index.body)?.[1]
  t.ok(icon, 'the tab\'s icon is extauth\'s')
  t.notMatch(index.body, /favicon-32x32\.png/, 'not Swagger UI\'s icon')
  const served = await adminApp.inject({ method: 'GET', url: new URL(icon ?? '', 'http://h/admin/docs/').pathname, headers: basic })
  t.equal(served.statusCode, 200)
  t.equal(served.body, FAVICON_SVG)
  const init = await adminApp.inject({ method: 'GET', url: '/admin/docs/static/swagger-initializer.js', headers: basic })
  const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(init.body)?.[1]
  t.equal(Buffer.from(logo ?? '', 'base64').toString('utf8'), LOGO_SVG, 'the title bar shows extauth\'s mark')
  t.notMatch(LOGO_SVG + FAVICON_SVG, /(?:href|src)=|url\(/, 'the marks load nothing')
})

t.test('the docs/ pages the descriptions name are links to pages the admin listener serves', async (t) => {
  const { adminApp } = await build(t)
  const basic = { authorization: `Basic ${Buffer.from(`operator:${ADMIN_TOKEN}`).toString('base64')}` }
  const text = JSON.stringify(await fetchDoc(adminApp))
  const links = [...text.matchAll(/\[(docs\/[^\]]+\.md)(#[\w-]+)?\]\(([^)]+)\)/g)]
  t.ok(links.length >= 8, `the references are links (${links.length})`)
  t.same([...text.replace(/\[docs\/[^\]]+\]\([^)]+\)/g, '').matchAll(/docs\/[\w./-]+\.md/g)].map((m) => m[0]), [], 'no reference left as plain text')
  for (const [, page, anchor, href] of links) {
    t.equal(href, `/admin/docs/files/${page ?? ''}${anchor ?? ''}`, `${page ?? ''}: linked to the listener's copy`)
    const res = await adminApp.inject({ method: 'GET', url: `/admin/docs/files/${page ?? ''}`, headers: basic })
    t.equal(res.statusCode, 200, `${page ?? ''} is served`)
    t.match(res.headers['content-type'], /^text\/plain; charset=utf-8/)
    t.equal(res.body, readFileSync(new URL(`../../${page ?? ''}`, import.meta.url), 'utf8'), `${page ?? ''}: the page as it is`)
  }
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/docs/files/README.md', headers: basic })).statusCode, 200, 'the README, which the pages link to')
  for (const path of ['/admin/docs/files/package.json', '/admin/docs/files/src/app.ts', '/admin/docs/files/docs/../package.json', '/admin/docs/files/docs/%2e%2e/package.json']) {
    t.equal((await adminApp.inject({ method: 'GET', url: path, headers: basic })).statusCode, 404, `${path}: not a page`)
  }
  t.equal((await adminApp.inject({ method: 'GET', url: '/admin/docs/files/docs/api/admin.md' })).statusCode, 401, 'behind the admin key like the reference')

  const elsewhere = await build(t, { env: { DOCS_BASE_URL: 'https://docs.example.test/extauth/v1' } })
  t.match(JSON.stringify(await fetchDoc(elsewhere.adminApp)), '[docs/api/admin.md](https://docs.example.test/extauth/v1/docs/api/admin.md)', 'DOCS_BASE_URL: links to another copy')
})
