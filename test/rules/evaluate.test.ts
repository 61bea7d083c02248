// evaluate(): the first enforce decline, shadow hits, and the matched limits in rule order.
import t from 'tap'
import { compileRuleFiles } from '../../src/rules/load.js'
import { compile, facts } from './helpers.js'

const NOW = Date.UTC(2026, 10, 21, 9, 30)

t.test('decline is the first matching enforce rule without a limit, in file then array order', async t => {
  const r = compileRuleFiles([
    { name: '20-b.json', text: JSON.stringify({ rules: [{ id: 'b1', when: { channel: { eq: 'POS' } }, then: { decline: '34' } }] }) },
    { name: '10-a.json', text: JSON.stringify({ rules: [
      { id: 'a1', when: { channel: { eq: 'ATM' } }, then: { decline: '05' } },
      { id: 'a2', when: { mcc: { eq: '5411' } }, then: { decline: '14' } },
      { id: 'a3', then: { decline: '05' } }
    ] }) }
  ].sort((x, y) => (x.name < y.name ? -1 : 1)), { timezone: 'UTC' })
  t.ok(r.ok)
  if (!r.ok) return
  const e = r.set.evaluate(facts({ channel: 'POS' }), NOW)
  t.same(e.decline, { ruleId: 'a2', code: '14', mode: 'enforce', values: { mcc: '5411' } })
  t.same(r.set.rules.map(x => (x as { id: string }).id), ['a1', 'a2', 'a3', 'b1'])
  t.equal((r.set.rules[3] as { file: string }).file, '20-b.json', 'each rule names its file')
})

t.test('shadow rules are recorded and never decline', async t => {
  const set = compile([
    { id: 's1', mode: 'shadow', when: { mcc: { eq: '5411' } }, then: { decline: '05' } },
    { id: 's2', mode: 'shadow', when: { amount: { gt: 1000 } }, then: { decline: '34' } },
    { id: 's3', mode: 'shadow', when: { amount: { gt: 5000 } }, then: { decline: '34' } }
  ])
  const e = set.evaluate(facts(), NOW)
  t.equal(e.decline, null)
  t.same(e.shadowHits, [
    { ruleId: 's1', code: '05', mode: 'shadow', values: { mcc: '5411' } },
    { ruleId: 's2', code: '34', mode: 'shadow', values: { amount: 1250 } }
  ])
  t.same(e.limits, [])
})

t.test('shadow hits are recorded even after an enforce decline', async t => {
  const set = compile([
    { id: 'e1', when: { mcc: { eq: '5411' } }, then: { decline: '05' } },
    { id: 'e2', when: { mcc: { eq: '5411' } }, then: { decline: '34' } },
    { id: 's1', mode: 'shadow', then: { decline: '34' } }
  ])
  const e = set.evaluate(facts(), NOW)
  t.equal(e.decline?.ruleId, 'e1')
  t.same(e.shadowHits.map(h => h.ruleId), ['s1'])
})

t.test('every matching limit is listed, enforce and shadow, per card or per urn', async t => {
  const set = compile([
    { id: 'atm-amount', when: { channel: { eq: 'ATM' } }, limit: { measure: 'amount', per: 'urn', window: 'day', max: 2500000 }, then: { decline: '61' } },
    { id: 'atm-count', mode: 'shadow', when: { channel: { eq: 'ATM' }, amount: { gt: 0 } }, limit: { measure: 'count', per: 'card', window: '1h', max: 3 }, then: { decline: '65' } },
    { id: 'pos-count', when: { channel: { eq: 'POS' } }, limit: { measure: 'count', per: 'card', window: '1h', max: 3 }, then: { decline: '65' } },
    { id: 'all-amount', limit: { measure: 'amount', per: 'card', window: '30m', max: 0 }, then: { decline: '61' } }
  ])
  const e = set.evaluate(facts({ channel: 'ATM' }), NOW)
  t.equal(e.decline, null, 'limits are not declines: the store decides them')
  t.same(e.limits, [
    { ruleId: 'atm-amount', mode: 'enforce', measure: 'amount', per: 'urn', windowStartMs: Date.UTC(2026, 10, 21), retainMs: 25 * 3_600_000, max: 2500000, code: '61', values: { channel: 'ATM' } },
    { ruleId: 'atm-count', mode: 'shadow', measure: 'count', per: 'card', windowStartMs: NOW - 3_600_000, retainMs: 3_600_000, max: 3, code: '65', values: { channel: 'ATM', amount: 1250 } },
    { ruleId: 'all-amount', mode: 'enforce', measure: 'amount', per: 'card', windowStartMs: NOW - 1_800_000, retainMs: 1_800_000, max: 0, code: '61', values: {} }
  ])
  t.same(e.shadowHits, [], 'a shadow limit is a limit, not a shadow hit')
})

t.test('evaluations share no state', async t => {
  const set = compile([
    { id: 'd', when: { mcc: { eq: '7995' } }, then: { decline: '05' } },
    { id: 's', mode: 'shadow', when: { channel: { eq: 'POS' } }, then: { decline: '05' } },
    { id: 'l', limit: { measure: 'count', per: 'urn', window: '1h', max: 1 }, then: { decline: '65' } }
  ])
  const a = set.evaluate(facts({ mcc: '7995' }), NOW)
  a.shadowHits.push(a.shadowHits[0] as never)
  a.limits.length = 0
  const b = set.evaluate(facts({ mcc: '5411', channel: 'ECOM' }), NOW + 1)
  t.equal(b.decline, null)
  t.same(b.shadowHits, [])
  t.equal(b.limits.length, 1)
  t.equal(b.limits[0]?.windowStartMs, NOW + 1 - 3_600_000)
  t.equal(set.evaluate(facts({ mcc: '7995' }), NOW).shadowHits.length, 1)
  t.ok(Object.isFrozen(set.rules) && Object.isFrozen(set.rules[0]), 'the loaded rules cannot be changed')
})

t.test('needsRisk: any rule, enforce or shadow, that names a risk. field', async t => {
  t.equal(compile([{ id: 'a', when: { mcc: { eq: '0001' } }, then: { decline: '05' } }]).needsRisk, false)
  t.equal(compile([{ id: 'a', when: { 'risk.ruleRating': { gte: 80 } }, then: { decline: '34' } }]).needsRisk, true)
  t.equal(compile([{ id: 'a', mode: 'shadow', when: { any: [{ mcc: { eq: '0001' } }, { not: { 'risk.stepUp': { eq: true } } }] }, then: { decline: '34' } }]).needsRisk, true)
  t.equal(compile([]).needsRisk, false)
})

t.test('a rule on risk facts when the risk service did not answer', async t => {
  const set = compile([
    { id: 'risky', when: { 'risk.ruleRating': { gte: 80 } }, then: { decline: '34' } },
    { id: 'fail-closed', mode: 'shadow', when: { 'risk.available': { eq: false }, amount: { gt: 1000 } }, then: { decline: '05' } }
  ])
  const down = set.evaluate(facts({}, NOW, { available: false }), NOW)
  t.equal(down.decline, null, 'no rating: the rating rule does not match')
  t.same(down.shadowHits.map(h => h.ruleId), ['fail-closed'])
  const high = set.evaluate(facts({}, NOW, { available: true, ruleRating: 90 }), NOW)
  t.equal(high.decline?.ruleId, 'risky')
  t.same(high.decline?.values, { 'risk.ruleRating': 90 })
})
