// WEBHOOK_*, EVENTS_BACKLOG_MAX, EVENTS_RELAY and EVENTS_SENDS_MAX: a wrong value stops the start-up naming the variable, never the secret.
import t from 'tap'
import { ConfigError } from '../../src/config.js'
import { testConfig } from '../helpers/config.js'

const SECRET = `whsec_${Buffer.alloc(24, 9).toString('base64')}`

t.test('events configuration', async (t) => {
  t.equal(testConfig().webhook, undefined, 'no WEBHOOK_URL: nothing sent')
  t.equal(testConfig().eventsBacklogMax, 1_000_000)
  t.same(testConfig({ WEBHOOK_URL: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: SECRET, WEBHOOK_EVENTS: 'decision.created, funds.credited' }).webhook,
    { url: 'http://127.0.0.1:9/h', secret: SECRET, types: ['decision.created', 'funds.credited'], relay: true, sendsMax: 32 })
  t.match(testConfig({ WEBHOOK_URL: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: SECRET, EVENTS_RELAY: 'false', EVENTS_SENDS_MAX: '4' }).webhook,
    { relay: false, sendsMax: 4 }, 'a decisions-only instance')
  const refused = (env: Record<string, string>): string => {
    try {
      testConfig(env)
    } catch (err) {
      t.ok(err instanceof ConfigError)
      t.notOk((err as Error).message.includes(SECRET.slice(6, 20)) || (err as Error).message.includes('short'), 'the secret is never in the message')
      return (err as ConfigError).variable
    }
    return 'accepted'
  }
  t.equal(refused({ WEBHOOK_URL: 'http://127.0.0.1:9/h' }), 'WEBHOOK_SECRET')
  t.equal(refused({ WEBHOOK_URL: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: 'whsec_short' }), 'WEBHOOK_SECRET')
  t.equal(refused({ WEBHOOK_URL: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: SECRET.replace('whsec_', '') }), 'WEBHOOK_SECRET')
  t.equal(refused({ WEBHOOK_SECRET: SECRET }), 'WEBHOOK_URL')
  t.equal(refused({ WEBHOOK_URL: 'ftp://x/h', WEBHOOK_SECRET: SECRET }), 'WEBHOOK_URL')
  t.equal(refused({ WEBHOOK_URL: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: SECRET, WEBHOOK_EVENTS: 'decision.created,decision.made' }), 'WEBHOOK_EVENTS')
  t.equal(refused({ EVENTS_BACKLOG_MAX: '10' }), 'EVENTS_BACKLOG_MAX')
  t.equal(refused({ EVENTS_SENDS_MAX: '0' }), 'EVENTS_SENDS_MAX')
  t.equal(refused({ EVENTS_RELAY: 'maybe' }), 'EVENTS_RELAY')
})
