// Every operator and combinator: a case that holds, one that does not, and a missing fact.
import t from 'tap'
import { compile, facts, matches, refusal } from './helpers.js'

const f = facts({ mcc: '7995', merchantName: 'ACME STORE', transactionAmount: '1250', fee: '50' })
// merchantId, billingCurrency, billingAmount are absent from these facts

t.test('eq and ne compare strings as strings, integers and booleans by value', async t => {
  t.ok(matches({ mcc: { eq: '7995' } }, f))
  t.notOk(matches({ mcc: { eq: '7996' } }, f))
  t.notOk(matches({ merchantId: { eq: 'M1' } }, f), 'missing fact: eq is false')
  t.ok(matches({ amount: { eq: 1250 } }, f))
  t.ok(matches({ crossBorder: { eq: false } }, f))
  t.ok(matches({ mcc: { ne: '5411' } }, f))
  t.notOk(matches({ mcc: { ne: '7995' } }, f))
  t.ok(matches({ merchantId: { ne: 'M1' } }, f), 'missing fact: ne is true (the negation of eq)')
  t.equal(matches({ not: { merchantId: { eq: 'M1' } } }, f), matches({ merchantId: { ne: 'M1' } }, f), 'ne is not-eq')
})

t.test('in and notIn', async t => {
  t.ok(matches({ mcc: { in: ['7995', '7800'] } }, f), 'an operator writing "7995" matches mcc "7995"')
  t.notOk(matches({ mcc: { in: ['7800', '7801'] } }, f))
  t.notOk(matches({ merchantId: { in: ['M1'] } }, f), 'missing fact: in is false')
  t.ok(matches({ amount: { in: [100, 1250] } }, f))
  t.ok(matches({ mcc: { notIn: ['7800'] } }, f))
  t.notOk(matches({ mcc: { notIn: ['7995', '7800'] } }, f))
  t.ok(matches({ merchantId: { notIn: ['M1'] } }, f), 'missing fact: notIn is true (the negation of in)')
})

t.test('gt gte lt lte on integers', async t => {
  t.ok(matches({ amount: { gt: 1249 } }, f))
  t.notOk(matches({ amount: { gt: 1250 } }, f))
  t.ok(matches({ amount: { gte: 1250 } }, f))
  t.notOk(matches({ amount: { gte: 1251 } }, f))
  t.ok(matches({ amount: { lt: 1251 } }, f))
  t.notOk(matches({ amount: { lt: 1250 } }, f))
  t.ok(matches({ amount: { lte: 1250 } }, f))
  t.notOk(matches({ amount: { lte: 1249 } }, f))
  t.equal(f.debitAmount, 1300)
  t.ok(matches({ debitAmount: { gt: 1250 } }, f), 'debitAmount includes the fee')
  for (const op of ['gt', 'gte', 'lt', 'lte']) {
    t.notOk(matches({ billingAmount: { [op]: 1 } }, f), `missing fact: ${op} is false`)
  }
})

t.test('numeric operators read a digits field as its number', async t => {
  t.ok(matches({ mcc: { gt: 7000 } }, f))
  t.notOk(matches({ mcc: { lt: 7000 } }, f))
  t.ok(matches({ mcc: { between: [7995, 7995] } }, f))
  t.ok(matches({ mcc: { between: [3000, 3299] } }, facts({ mcc: '3005' })), 'airline MCC range')
  t.notOk(matches({ mcc: { between: [3000, 3299] } }, facts({ mcc: '0300' })), '"0300" is 300')
  t.ok(matches({ transactionAmount: { gte: 1250 } }, f))
  t.notOk(matches({ mcc: { gt: 0 } }, facts({ mcc: undefined })), 'missing digits fact is false')
})

t.test('between is inclusive at both ends', async t => {
  t.ok(matches({ amount: { between: [1250, 2000] } }, f))
  t.ok(matches({ amount: { between: [100, 1250] } }, f))
  t.notOk(matches({ amount: { between: [1251, 2000] } }, f))
  t.notOk(matches({ amount: { between: [0, 1249] } }, f))
  t.notOk(matches({ billingAmount: { between: [0, 10] } }, f), 'missing fact: between is false')
})

t.test('startsWith', async t => {
  t.ok(matches({ merchantName: { startsWith: 'ACME' } }, f))
  t.notOk(matches({ merchantName: { startsWith: 'acme' } }, f), 'case-sensitive')
  t.ok(matches({ mcc: { startsWith: '79' } }, f))
  t.notOk(matches({ merchantId: { startsWith: 'M' } }, f), 'missing fact: startsWith is false')
})

t.test('exists', async t => {
  t.ok(matches({ fee: { exists: true } }, f))
  t.notOk(matches({ fee: { exists: false } }, f))
  t.ok(matches({ merchantId: { exists: false } }, f), 'missing fact: exists false is true')
  t.notOk(matches({ merchantId: { exists: true } }, f))
})

t.test('combinators all, any, not; several fields and operators in one object', async t => {
  t.ok(matches({ all: [{ mcc: { eq: '7995' } }, { amount: { gt: 1000 } }] }, f))
  t.notOk(matches({ all: [{ mcc: { eq: '7995' } }, { amount: { gt: 2000 } }] }, f))
  t.ok(matches({ any: [{ mcc: { eq: '0001' } }, { amount: { gt: 1000 } }] }, f))
  t.notOk(matches({ any: [{ mcc: { eq: '0001' } }, { amount: { gt: 2000 } }] }, f))
  t.notOk(matches({ any: [{ merchantId: { eq: 'M' } }] }, f), 'any over a missing fact')
  t.ok(matches({ not: { mcc: { eq: '0001' } } }, f))
  t.notOk(matches({ not: { mcc: { eq: '7995' } } }, f))
  t.ok(matches({ not: { merchantId: { exists: true } } }, f))
  t.ok(matches({ mcc: { eq: '7995' }, channel: { eq: 'POS' } }, f), 'several fields: all must hold')
  t.notOk(matches({ mcc: { eq: '7995' }, channel: { eq: 'ATM' } }, f))
  t.ok(matches({ amount: { gte: 1000, lt: 2000 } }, f), 'several operators on one field: all must hold')
  t.notOk(matches({ amount: { gte: 1000, lt: 1200 } }, f))
  t.ok(matches({ channel: { eq: 'POS' }, not: { mcc: { eq: '0001' } } }, f), 'a combinator beside a field')
  t.ok(matches({ all: [{ any: [{ mcc: { eq: '0001' } }, { not: { channel: { eq: 'ATM' } } }] }] }, f), 'nested')
})

t.test('a rule without when always matches', async t => {
  const set = compile([{ id: 'always', then: { decline: '05' } }])
  t.equal(set.evaluate(f, 0).decline?.ruleId, 'always')
  t.equal(set.evaluate({}, 0).decline?.ruleId, 'always')
})

t.test('risk facts', async t => {
  const rated = facts({}, 0, { available: true, ruleRating: 80, ruleSuggestion: 'DENY', stepUp: true })
  t.ok(matches({ 'risk.ruleRating': { gte: 70 } }, rated))
  t.ok(matches({ 'risk.ruleSuggestion': { eq: 'DENY' } }, rated))
  t.ok(matches({ 'risk.stepUp': { eq: true } }, rated))
  const unavailable = facts({}, 0, null)
  t.notOk(matches({ 'risk.ruleRating': { gte: 0 } }, unavailable))
  t.ok(matches({ 'risk.available': { eq: false } }, unavailable))
})

t.test('operands that do not fit the field are refused at load time', async t => {
  const code = (when: unknown): string | undefined => refusal([{ id: 'r', when, then: { decline: '05' } }])[0]?.code
  t.equal(code({ mcc: { eq: 7995 } }), 'RULE_OPERAND_INVALID', 'number against the string mcc')
  t.equal(code({ mcc: { in: [7995] } }), 'RULE_OPERAND_INVALID')
  t.equal(code({ mcc: { in: '7995' } }), 'RULE_OPERAND_INVALID', 'in takes an array')
  t.equal(code({ mcc: { notIn: [] } }), 'RULE_CONDITION_EMPTY')
  t.equal(code({ amount: { eq: '1250' } }), 'RULE_OPERAND_INVALID', 'string against an integer')
  t.equal(code({ amount: { gt: 1.5 } }), 'RULE_OPERAND_INVALID', 'amounts are integers')
  t.equal(code({ amount: { between: [10] } }), 'RULE_OPERAND_INVALID')
  t.equal(code({ amount: { between: [10, 5] } }), 'RULE_OPERAND_INVALID', 'lo > hi')
  t.equal(code({ merchantName: { gt: 5 } }), 'RULE_OPERATOR_NOT_APPLICABLE', 'gt on a text field')
  t.equal(code({ amount: { startsWith: '1' } }), 'RULE_OPERATOR_NOT_APPLICABLE')
  t.equal(code({ fee: { exists: 'yes' } }), 'RULE_OPERAND_INVALID', 'exists takes a boolean')
  t.equal(code({ crossBorder: { eq: 'true' } }), 'RULE_OPERAND_INVALID')
  t.equal(code({ merchantName: { startsWith: '' } }), 'RULE_OPERAND_INVALID')
  t.equal(code({ mcc: { like: '79%' } }), 'RULE_OPERATOR_UNKNOWN')
  t.equal(code({ mcc: '7995' }), 'RULE_CONDITION_INVALID', 'a field takes an object of operators')
  t.equal(code({ mcc: {} }), 'RULE_CONDITION_EMPTY')
  t.equal(code({ any: [] }), 'RULE_CONDITION_EMPTY')
  t.equal(code({ any: { mcc: { eq: '0001' } } }), 'RULE_CONDITION_INVALID', 'any takes an array')
  t.equal(code({ merchant: { eq: 'x' } }), 'RULE_FIELD_UNKNOWN')
  t.equal(code({ 'risk.score': { gt: 1 } }), 'RULE_FIELD_UNKNOWN')
})

t.test('nesting is limited to ruleDepthMax levels; tests to ruleConditionsMax a rule', async t => {
  const nest = (levels: number): unknown => {
    let w: unknown = { mcc: { eq: '7995' } }
    for (let i = 1; i < levels; i++) w = { not: w }
    return w
  }
  t.same(refusal([{ id: 'r', when: nest(8), then: { decline: '05' } }]), [], '8 levels load')
  t.same(refusal([{ id: 'r', when: nest(9), then: { decline: '05' } }]).map(e => e.code), ['RULE_DEPTH_EXCEEDED'])
  t.ok(matches(nest(8), facts({ mcc: '5411' })), 'seven nots around eq 7995: true for 5411')
  const tests = (n: number): unknown => ({ all: Array.from({ length: n }, (_, i) => ({ amount: { gte: i } })) })
  t.same(refusal([{ id: 'r', when: tests(256), then: { decline: '05' } }]), [])
  t.same(refusal([{ id: 'r', when: tests(257), then: { decline: '05' } }]).map(e => e.code), ['RULE_CONDITIONS_TOO_MANY'])
})
