// docs/api/card-lifecycle.md's requests as a reader copies them: one for every card-lifecycle call of the API
// reference, each body valid by the call's schema in the reference, and each taken by extauth's route as it
// stands (no party is configured here, so each meets 503 NOT_CONFIGURED after its validation, never a 400).
import t from 'tap'
import { Ajv } from 'ajv'
import { build } from '../helpers/app.js'
import { TAGS } from '../../src/http/openapi.js'
import { codeBlocks, curlCalls, readPage, shellLines } from './page.js'

type Operation = { tags?: string[], requestBody?: { content: Record<string, { schema: object }> } }

t.test('the page shows a whole request for every card-lifecycle call, and each is one extauth takes', async (t) => {
  const block = codeBlocks(readPage('docs/api/card-lifecycle.md')).find((b) => b.lang === 'sh' && b.heading === 'Requests')
  t.ok(block, 'the page has its requests')
  const calls = curlCalls(block?.body ?? '')
  // the admin key of the README's set-up, which the page's requests carry
  const setUp = codeBlocks(readPage('README.md')).flatMap((b) => shellLines(b.body)).find((l) => l.words.includes('start'))
  const token = setUp?.words.find((w) => w.startsWith('ADMIN_TOKEN='))?.slice('ADMIN_TOKEN='.length)
  t.ok(token, 'the README starts extauth with an ADMIN_TOKEN')
  const { adminApp, deps } = await build(t, { env: { ADMIN_TOKEN: token ?? '' } })
  const doc = (await adminApp.inject({ method: 'GET', url: '/admin/openapi.json', headers: { authorization: `Bearer ${token ?? ''}` } })).json() as { paths: Record<string, Record<string, Operation>> }
  const ajv = new Ajv({ strict: false, allowUnionTypes: true })

  const lifecycle = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops)
    .filter(([, op]) => op.tags?.includes(TAGS.lifecycle) === true)
    .map(([method, op]) => ({ method: method.toUpperCase(), path, op, matches: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`) })))
  t.ok(lifecycle.length >= 10, `the reference's card-lifecycle calls were read (${lifecycle.length})`)
  for (const route of lifecycle) {
    const shown = calls.filter((c) => c.method === route.method && route.matches.test(c.url.pathname))
    t.equal(shown.length, 1, `${route.method} ${route.path}: one request on the page`)
    const call = shown[0]
    if (call === undefined) continue
    t.equal(call.url.port, String(deps.config.adminPort), `${route.method} ${route.path}: to the admin listener`)
    const schema = route.op.requestBody?.content['application/json']?.schema
    t.equal(call.body !== undefined, schema !== undefined, `${route.method} ${route.path}: a body where the call takes one`)
    if (schema !== undefined && call.body !== undefined) {
      t.ok(ajv.validate(schema, JSON.parse(call.body)), `${route.method} ${route.path}: the page's body is valid ${JSON.stringify(ajv.errors)}`)
    }
    const res = await adminApp.inject({ method: call.method as 'GET', url: call.url.pathname, headers: call.headers, ...(call.body !== undefined ? { payload: call.body } : {}) })
    t.match({ status: res.statusCode, body: res.json() }, { status: 503, body: { error: 'NOT_CONFIGURED' } }, `${route.method} ${route.path}: taken as it is written`)
  }
  t.equal(calls.length, lifecycle.length, 'nothing on the page that is not a card-lifecycle call')
})
