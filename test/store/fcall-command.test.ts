// The authorize call is built without ioredis's call() (src/store/redis.ts fcallCommand, which skips the
// argument copy of its constructor): the command written to Redis, its keys (a cluster routes by them) and the
// reply must be what call('FCALL', ...) gives for the same arguments.
import t from 'tap'
import { Command } from 'ioredis'
import { RedisStore, createRedisClient, fcallCommand } from '../../src/store/redis.js'
import { AUTHORIZE_FUNCTION } from '../../src/store/functions.js'
import { authInput, limit } from './contract.js'
import { controls } from './controls-contract.js'

const store = new RedisStore(createRedisClient({ url: 'redis://127.0.0.1:1' }), { prefix: 'fcall-cmd:' })
t.teardown(async () => { await store.close() })

const inputs = {
  'a plain approval': authInput('U1'),
  'limits, controls and a stateless decline': authInput('U%2:x', {
    limits: [limit(), limit({ ruleId: 'per-card', per: 'card', measure: 'amount', max: 5000 })],
    controls: controls(['POS', ['international', { perTransactionMax: 300 }]]),
    decline: { code: '05', ruleId: 'block-gambling', mode: 'enforce', values: { mcc: '7995' } }
  }),
  'a request with text outside ASCII': authInput('U3', {
    meta: { rulesVersion: 'v1', shadowHits: [{ code: '05', ruleId: 's', mode: 'shadow', values: {} }], transactionAmount: '100', currencyCode: '356', channel: 'POS', request: { merchantName: 'Café Zürich ☕', urn: 'U3' } }
  }),
  // the bulk headers of lengths up to 2047 are made once (bulkHeader): one past them, and one far past
  'arguments longer than the headers made once': authInput('U4', {
    meta: { rulesVersion: 'v1', shadowHits: [], transactionAmount: '100', currencyCode: '356', channel: 'POS', request: { merchantName: 'M'.repeat(2100), terminalId: 'é'.repeat(5000), urn: 'U4' } }
  })
}

for (const [name, input] of Object.entries(inputs)) {
  t.test(name, async (t) => {
    const args = store.authorizeArgs(input)
    t.ok(args.every((a) => typeof a === 'string'), 'every argument a string')
    const ours = fcallCommand(args)
    const theirs = new Command('FCALL', [AUTHORIZE_FUNCTION, ...args], { replyEncoding: 'utf8' })
    t.equal(ours.toWritable(undefined as never), theirs.toWritable(undefined as never), 'the same bytes written')
    t.same(ours.getKeys(), theirs.getKeys(), 'the same keys')
    t.equal(ours.getKeys().length, Number(args[0]), 'every key declared')
    t.equal(ours.getSlot(), theirs.getSlot(), 'the same cluster slot')
  })
}
