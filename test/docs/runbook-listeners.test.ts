// docs/operations/runbook.md, "Which listener serves what", against the two listeners: each call the table
// gives a listener is served there and not on the other, and health asked of the admin listener answers the
// 404 the runbook quotes, before any key is asked for.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/app.js'
import { adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { readPage } from './page.js'

const page = readPage('docs/operations/runbook.md')
const section = page.slice(page.indexOf('**Which listener serves what.**'), page.indexOf('**Health.**'))

/** the `METHOD /path` calls a row of the table names (paths with … are families, not calls) */
function callsOf (listener: string): Array<[string, string]> {
  const row = section.split('\n').find((l) => l.startsWith(`| ${listener} |`)) ?? ''
  return [...row.matchAll(/`(GET|POST) (\/[^`…]+)`/g)].map((m) => [m[1] as string, m[2] as string])
}

async function status (app: FastifyInstance, method: string, url: string, headers: Record<string, string>): Promise<number> {
  const body = url === '/api/v1/externalAuth' ? { payload: authBody() } : {}
  return (await app.inject({ method: method as 'GET', url, headers, ...body })).statusCode
}

t.test('each listener serves the calls the runbook gives it, and only it', async (t) => {
  t.ok(section.length > 0, 'the runbook says which listener serves what')
  const { publicApp, adminApp } = await build(t)
  const pub = callsOf('public')
  const admin = callsOf('admin')
  t.ok(pub.length >= 3 && admin.length >= 2, `the table names calls (${pub.length} public, ${admin.length} admin)`)
  for (const [method, url] of pub) {
    t.not(await status(publicApp, method, url, platformHeaders()), 404, `public: ${method} ${url} is served`)
    t.equal(await status(adminApp, method, url, adminHeaders), 404, `admin: ${method} ${url} is not (404, with a key too)`)
  }
  for (const [method, url] of admin) {
    t.not(await status(adminApp, method, url, adminHeaders), 404, `admin: ${method} ${url} is served`)
    t.equal(await status(publicApp, method, url, platformHeaders()), 404, `public: ${method} ${url} is not`)
  }
})

t.test('health on the admin listener: the 404 the runbook quotes, without a key', async (t) => {
  const quoted = /naming where it is: `([^`]+)`/.exec(section)?.[1]?.replace(/\s+/g, ' ')
  t.ok(quoted, 'the runbook quotes the answer')
  // the runbook's defaults: PORT 8080, ADMIN_PORT 8081, HOST 0.0.0.0
  const { adminApp } = await build(t)
  for (const url of ['/health/live', '/health/ready']) {
    const res = await adminApp.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, `${url}: 404 without a key`)
    t.same(res.json(), { error: 'NOT_FOUND', message: quoted }, `${url}: the message the runbook quotes`)
  }
})
