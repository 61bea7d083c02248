// `extauth rules test` cases are requests the endpoint would take: a misspelt field or a channel the
// endpoint refuses is an error, not a case that silently runs on the defaults. And a case with many prior
// transactions runs without warnings.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parseCasesFile } from '../../src/cli/cases-file.js'
import { runCases } from '../../src/cli/run-cases.js'
import { compile } from '../rules/helpers.js'

const parse = (doc: unknown) => parseCasesFile(JSON.stringify(doc))

t.test('a misspelt request field is an error naming the field it was likely meant to be', async t => {
  const r = parse({ cases: [{ name: 'atm', request: { chanel: 'ATM' }, expect: '05' }] })
  t.notOk(r.ok)
  if (r.ok) return
  t.same(r.errors.length, 1)
  t.match(r.errors[0], /^\/cases\/0\/request \("atm"\): unknown field "chanel" \(did you mean `channel`\? fields: customerId, urn, /)
})

t.test('a value the endpoint refuses is an error', async t => {
  const r = parse({
    defaults: { request: { currencyCode: '35' } },
    cases: [
      { name: 'not-a-channel', request: { channel: 'ecom', currencyCode: '356' }, expect: '05' },
      { name: 'prior with a bad amount', request: { currencyCode: '356' }, prior: [{ request: { transactionAmount: '12.50' } }], expect: '00' }
    ]
  })
  t.notOk(r.ok)
  if (r.ok) return
  t.same(r.errors, [
    '/cases/0/request ("not-a-channel"): channel "ecom" is not one the endpoint accepts (did you mean `ECOM`? valid: POS, ECOM, ATM, POS-Contactless)',
    '/cases/1/prior/0/request ("prior with a bad amount"): transactionAmount "12.50" must match pattern "^[0-9]{1,15}$"'
  ])
  const fromDefaults = parse({ defaults: { request: { currencyCode: '35' } }, cases: [{ name: 'c', expect: '00' }] })
  t.notOk(fromDefaults.ok, 'a bad default is caught through the cases that use it')
})

t.test('a valid file still parses', async t => {
  const r = parse({ defaults: { request: { channel: 'ECOM' } }, cases: [{ name: 'pos', request: { channel: 'POS-Contactless', fee: '100' }, expect: '00' }] })
  t.ok(r.ok, JSON.stringify(r))
})

t.test('a case with more than ten prior transactions raises no MaxListenersExceededWarning', async t => {
  const warnings: Error[] = []
  const onWarning = (w: Error): void => { warnings.push(w) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const rules = compile([{ id: 'count', limit: { measure: 'count', per: 'card', window: 'day', max: 20 }, then: { decline: '65' } }])
  const parsed = parse({
    now: '2026-11-21T12:00:00Z',
    cases: [{ name: 'the 21st of the day', prior: [{ ago: '1h', count: 20 }], expect: '65', expectRuleId: 'count' }]
  })
  if (!parsed.ok) return t.fail(parsed.errors.join('\n'))
  const [result] = await runCases(parsed.file, { rules, timezone: 'UTC' })
  t.equal(result?.ok, true, JSON.stringify(result))
  t.equal(result?.priorTotal, 20)
  // process warnings are emitted on a later tick
  await new Promise(resolve => setImmediate(resolve))
  t.same(warnings.map(w => w.name), [], 'no process warnings')
})

t.test('a case\'s optional field sent as "" is absent, as at the endpoint', async t => {
  const rules = compile([
    { id: 'cross-border', when: { crossBorder: { eq: true } }, then: { decline: '05' } },
    { id: 'merchant-named', when: { merchantName: { exists: true } }, then: { decline: '34' } }
  ])
  const parsed = parse({
    defaults: { request: { currencyCode: '356' } },
    cases: [
      { name: 'billingCurrency ""', request: { billingCurrency: '', merchantName: '' }, expect: '00' },
      { name: 'currencyCode "" (the default currency)', request: { currencyCode: '', billingCurrency: '356', merchantName: '' }, expect: '00' },
      { name: 'abroad', request: { billingCurrency: '840', merchantName: '' }, expect: '05', expectRuleId: 'cross-border' }
    ]
  })
  if (!parsed.ok) return t.fail(parsed.errors.join('\n'))
  const results = await runCases(parsed.file, { rules, timezone: 'UTC', defaultCurrency: '356' })
  t.same(results.map((r) => [r.name, r.code, r.ruleId]), [
    ['billingCurrency ""', '00', null],
    ['currencyCode "" (the default currency)', '00', null],
    ['abroad', '05', 'cross-border']
  ])
})

t.test('a prior transaction inherits the case\'s request, as docs/rules/cli.md says', async t => {
  // an ATM amount limit: four prior withdrawals of 6,000.00 (the case's channel and amount, not the file's
  // defaults) and the fifth goes over 25,000.00
  const rules = compile([{ id: 'atm-daily', when: { channel: { eq: 'ATM' } }, limit: { measure: 'amount', per: 'card', window: 'day', max: 2500000 }, then: { decline: '61' } }])
  const parsed = parse({
    now: '2026-11-21T12:00:00Z',
    cases: [
      { name: 'the fifth ATM withdrawal', request: { channel: 'ATM', transactionAmount: '600000' }, customer: { balance: 10000000 }, prior: [{ ago: '1h', count: 4 }], expect: '61', expectRuleId: 'atm-daily' },
      { name: 'after four POS payments', request: { channel: 'ATM', transactionAmount: '600000' }, customer: { balance: 10000000 }, prior: [{ ago: '1h', count: 4, request: { channel: 'POS' } }], expect: '00' }
    ]
  })
  if (!parsed.ok) return t.fail(parsed.errors.join('\n'))
  const results = await runCases(parsed.file, { rules, timezone: 'UTC' })
  t.same(results.map((r) => r.ok), [true, true], JSON.stringify(results))
  const page = readFileSync(new URL('../../docs/rules/cli.md', import.meta.url), 'utf8')
  t.match(page, /A prior\s+transaction's request is the case's request/, 'the page says so')
})
