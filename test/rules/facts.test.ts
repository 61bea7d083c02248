// buildFacts: request fields as sent, integers for amounts, derived facts, risk.
import t from 'tap'
import { buildFacts } from '../../src/rules/facts.js'
import { request } from './helpers.js'

const NOW = Date.UTC(2026, 10, 21, 20, 0) // Saturday 20:00 UTC = Sunday 01:30 in Kolkata

t.test('request fields as sent; extra fields are not facts', async t => {
  const f = buildFacts(request({ merchantName: 'ACME', entityId: '0001', extraThing: 'x' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(f.urn, 'URN0001')
  t.equal(f.mcc, '5411')
  t.equal(f.systemTraceAuditNumber, '162')
  t.equal(f.transactionAmount, '1250', 'strings as sent')
  t.equal(f.merchantName, 'ACME')
  t.equal(f.entityId, '0001')
  t.notOk('extraThing' in f)
  t.equal(f.merchantId, undefined)
})

t.test('originalRrn is also filled from the sample spelling orignialRrn', async t => {
  const only = buildFacts(request({ orignialRrn: '123' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(only.originalRrn, '123')
  t.equal(only.orignialRrn, '123')
  const both = buildFacts(request({ orignialRrn: '123', originalRrn: '456' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(both.originalRrn, '456', 'the correct spelling wins when both are sent')
})

t.test('amounts: integers, debitAmount = (billingAmount or amount) + fee', async t => {
  const plain = buildFacts(request({ transactionAmount: '1250' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(plain.amount, 1250)
  t.equal(plain.fee, undefined, 'absent when not sent')
  t.equal(plain.billingAmount, undefined)
  t.equal(plain.debitAmount, 1250, 'fee counts as 0 when absent')
  const withFee = buildFacts(request({ transactionAmount: '1250', fee: '25' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(withFee.fee, 25)
  t.equal(withFee.debitAmount, 1275)
  const billed = buildFacts(request({ transactionAmount: '1000', billingAmount: '1180', billingCurrency: '840', fee: '20' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(billed.billingAmount, 1180)
  t.equal(billed.debitAmount, 1200, 'billing amount replaces the transaction amount')
  const big = buildFacts(request({ transactionAmount: '900719925474099' }), { nowMs: NOW, timezone: 'UTC' })
  t.equal(big.amount, 900719925474099, '15 digits stay a safe integer')
})

t.test('crossBorder: billing currency present and different from currencyCode', async t => {
  const mk = (over: Record<string, string | undefined>, defaultCurrency?: string): unknown =>
    buildFacts(request(over), { nowMs: NOW, timezone: 'UTC', defaultCurrency }).crossBorder
  t.equal(mk({ currencyCode: '356' }), false, 'no billing currency')
  t.equal(mk({ currencyCode: '356', billingCurrency: '356' }), false)
  t.equal(mk({ currencyCode: '356', billingCurrency: '840' }), true)
  t.equal(mk({ currencyCode: undefined, billingCurrency: '356' }, '356'), false, 'no currencyCode: the default currency')
  t.equal(mk({ currencyCode: undefined, billingCurrency: '840' }, '356'), true)
})

t.test('hour and dayOfWeek (1 = Monday .. 7 = Sunday) in the time zone', async t => {
  const utc = buildFacts(request(), { nowMs: NOW, timezone: 'UTC' })
  t.equal(utc.hour, 20)
  t.equal(utc.dayOfWeek, 6, 'Saturday')
  const ist = buildFacts(request(), { nowMs: NOW, timezone: 'Asia/Kolkata' })
  t.equal(ist.hour, 1)
  t.equal(ist.dayOfWeek, 7, 'already Sunday in Kolkata')
  const monday = buildFacts(request(), { nowMs: Date.UTC(2026, 10, 23, 0, 0), timezone: 'UTC' })
  t.equal(monday.dayOfWeek, 1)
  t.equal(monday.hour, 0)
})

t.test('risk facts', async t => {
  const none = buildFacts(request(), { nowMs: NOW, timezone: 'UTC' })
  t.equal(none['risk.available'], false)
  t.equal(none['risk.ruleRating'], undefined)
  t.equal(none['risk.ruleSuggestion'], undefined)
  t.equal(none['risk.stepUp'], undefined)
  t.equal(buildFacts(request(), { nowMs: NOW, timezone: 'UTC', risk: null })['risk.available'], false)
  const down = buildFacts(request(), { nowMs: NOW, timezone: 'UTC', risk: { available: false } })
  t.equal(down['risk.available'], false)
  const r = buildFacts(request(), { nowMs: NOW, timezone: 'UTC', risk: { available: true, ruleRating: 42, ruleSuggestion: 'ACCEPT', stepUp: false } })
  t.same([r['risk.available'], r['risk.ruleRating'], r['risk.ruleSuggestion'], r['risk.stepUp']], [true, 42, 'ACCEPT', false])
})
