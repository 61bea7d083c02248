// Money under concurrency, over real HTTP on a real Redis: funds and limits can never be passed together,
// and a reference sent many times at once is debited once.
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helpers/app.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { listen, post } from '../helpers/http.js'
import { authBody, platformHeaders } from '../helpers/config.js'
import type { Store } from '../../src/store/types.js'

const PATH = '/api/v1/externalAuth'
// generous: the assertion is about money, not speed, and these machines are shared
const env = { DECISION_DEADLINE_MS: '1999' }

async function seed (store: Store, urn: string, amount: number): Promise<void> {
  await store.putCustomer(urn, {})
  await store.credit(urn, amount, `seed-${urn}`)
}

t.test('funds for exactly N debits, 20·N concurrent authorizations: exactly N approved', async (t) => {
  const store = await sharedRedisStore(t)
  const { publicApp } = await build(t, { store, env, logLevel: 'warn' })
  const { pool } = await listen(t, publicApp)
  const N = 25
  const urn = `UCONC${process.pid}`
  await seed(store, urn, N * 100)
  const answers = await Promise.all(Array.from({ length: 20 * N }, async () =>
    await post(pool, PATH, platformHeaders(), authBody({ urn, transactionAmount: '100' }))))
  const codes = answers.map((a) => a.body.responseCode)
  t.equal(answers.filter((a) => a.status !== 200).length, 0, 'every answer is a 200')
  t.equal(codes.filter((c) => c === '00').length, N, 'exactly N approved')
  t.equal(codes.filter((c) => c === '51').length, 19 * N, 'the rest declined for funds')
  t.equal((await store.getCustomer(urn))?.available, 0, 'balance exactly 0')
  const approvals = (await store.readDecisionStream(urn)).filter((e) => e.urn === urn && e.type === 'decision' && e.code === '00')
  t.equal(approvals.length, N, 'the stream holds exactly N approvals')
})

t.test('duplicate storm: every reference 3 times at once, debited once, identical answers', async (t) => {
  const store = await sharedRedisStore(t)
  const { publicApp } = await build(t, { store, env, logLevel: 'warn' })
  const { pool } = await listen(t, publicApp)
  const urn = `UDUP${process.pid}`
  const refs = 60
  const amount = 70
  // funds for half of them: some references approve, some decline, and each must answer one way thrice
  await seed(store, urn, (refs / 2) * amount)
  const bodies = Array.from({ length: refs }, () => authBody({ urn, transactionAmount: String(amount) }))
  const sends = bodies.flatMap((b) => [b, b, b]).map(async (b) => ({ ref: b.transactionReferenceNumber as string, a: await post(pool, PATH, platformHeaders(), b) }))
  const results = await Promise.all(sends)
  const byRef = new Map<string, string[]>()
  for (const { ref, a } of results) byRef.set(ref, [...(byRef.get(ref) ?? []), a.body.responseCode as string])
  let approved = 0
  for (const [ref, codes] of byRef) {
    t.equal(new Set(codes).size, 1, `${ref}: three identical answers (${codes.join(',')})`)
    if (codes[0] === '00') approved++
  }
  t.equal(approved, refs / 2, 'as many approved as the funds allow')
  t.equal((await store.getCustomer(urn))?.available, 0, 'each approved reference debited once')
  const decisions = (await store.readDecisionStream(urn)).filter((e) => e.urn === urn && e.type === 'decision')
  t.equal(decisions.length, refs, 'one decision per reference')
})

t.test('a count limit under concurrency: N allowed, 10·N concurrent, exactly N approved', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-rules-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const N = 5
  await writeFile(join(dir, '10-limit.json'), JSON.stringify({
    rules: [{ id: 'pos-count', description: 'at most N POS transactions an hour', when: { channel: { eq: 'POS' } }, limit: { measure: 'count', per: 'urn', window: '1h', max: N }, then: { decline: '65' } }]
  }))
  const store = await sharedRedisStore(t)
  const { publicApp } = await build(t, { store, env: { ...env, RULES_DIR: dir }, logLevel: 'warn' })
  const { pool } = await listen(t, publicApp)
  const urn = `ULIM${process.pid}`
  await seed(store, urn, 1_000_000)
  const answers = await Promise.all(Array.from({ length: 10 * N }, async () =>
    await post(pool, PATH, platformHeaders(), authBody({ urn, transactionAmount: '100' }))))
  const codes = answers.map((a) => a.body.responseCode)
  t.equal(codes.filter((c) => c === '00').length, N)
  t.equal(codes.filter((c) => c === '65').length, 9 * N)
  t.equal((await store.getCustomer(urn))?.available, 1_000_000 - N * 100)
})

t.test('a card control dailyMax under concurrency: 1,000 ECOM requests at once, exactly N approved, their sum within dailyMax', async (t) => {
  const store = await sharedRedisStore(t)
  const { publicApp } = await build(t, { store, env, logLevel: 'warn' })
  const { pool } = await listen(t, publicApp)
  const N = 40
  const amount = 250
  const dailyMax = N * amount + amount - 1
  const urn = `UCTL${process.pid}`
  await seed(store, urn, 10_000_000)
  await store.putCard(urn, '4321', 'ACTIVE')
  await store.patchCardControls(urn, '4321', { ECOM: { enabled: true, dailyMax } })
  const answers = await Promise.all(Array.from({ length: 1000 }, async () =>
    await post(pool, PATH, platformHeaders(), authBody({ urn, channel: 'ECOM', last4Digits: '4321', transactionAmount: String(amount) }))))
  const codes = answers.map((a) => a.body.responseCode)
  t.equal(answers.filter((a) => a.status !== 200).length, 0, 'every answer is a 200')
  t.equal(codes.filter((c) => c === '00').length, N, 'exactly N approved')
  t.equal(codes.filter((c) => c === '61').length, 1000 - N, 'the rest declined by the control')
  const approvals = (await store.readDecisionStream(urn)).filter((e) => e.urn === urn && e.type === 'decision' && e.code === '00')
  const sum = approvals.reduce((s, e) => s + Number(e.debit), 0)
  t.ok(sum <= dailyMax, `approved ${sum} within ${dailyMax}`)
  t.equal((await store.getCustomer(urn))?.available, 10_000_000 - N * amount)
})
