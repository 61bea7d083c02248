// extauth_rejected_request_reasons_total is on the first scrape with every reason at zero, as the runbook says
// of labelled counters: a rate or an alert over it has a series before the first refusal.
import t from 'tap'
import { build } from '../helpers/app.js'

t.test('every refusal reason is scraped at zero before any request', async (t) => {
  const { adminApp } = await build(t)
  const text = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  for (const [status, reason] of [['400', 'validation'], ['400', 'bad_json'], ['400', 'too_large'], ['400', 'content_type'], ['400', 'empty_body'], ['401', 'caller'], ['403', 'source']]) {
    t.match(text, `extauth_rejected_request_reasons_total{status="${status}",reason="${reason}"} 0\n`, `${status} ${reason}`)
  }
})
