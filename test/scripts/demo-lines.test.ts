// `npm run demo`'s line for a payment: a shed answer says so, a lookup that found no decision is never
// printed as a reason ("05 DO_NOT_HONOR (undefined)"), and a found decision names its rule or reason.
import t from 'tap'
import { paymentLine } from '../../scripts/lib/demo-lines.js'

const declined = { responseCode: '05', responseDescription: 'DO_NOT_HONOR' }
const notFound = { status: 404, body: { error: 'DECISION_NOT_FOUND', message: 'no decision R1 for DEMO000001' } }

t.test('a shed answer says the instance was overloaded', async (t) => {
  const line = paymentLine('groceries, POS', '2450.00', declined, notFound, true)
  t.match(line, /→ 05 DO_NOT_HONOR \(shed: the instance was overloaded/)
  t.notMatch(line, /undefined/)
})

t.test('a decision not found, for an answer that was not shed, stops the demo naming the lookup', async (t) => {
  t.throws(() => paymentLine('groceries, POS', '2450.00', declined, notFound, false), /DECISION_NOT_FOUND/)
})

t.test('a lookup that failed otherwise stops the demo too', async (t) => {
  t.throws(() => paymentLine('groceries, POS', '2450.00', declined, { status: 401, body: { error: 'UNAUTHORIZED', message: 'x' } }, false), /401 UNAUTHORIZED/)
})

t.test('a decision found for a shed answer is a contradiction, not printed as shed', async (t) => {
  t.throws(() => paymentLine('groceries, POS', '2450.00', declined, { status: 200, body: { reason: 'rule', ruleId: 'r1' } }, true), /shed/)
})

t.test('a decision found names its rule, or its reason and control', async (t) => {
  t.match(paymentLine('casino', '1000.00', declined, { status: 200, body: { reason: 'rule', ruleId: 'block-gambling', control: null } }, false),
    /→ 05 DO_NOT_HONOR \(rule block-gambling\)$/)
  t.match(paymentLine('books online', '1500.00', declined, { status: 200, body: { reason: 'control_off', ruleId: null, control: { kind: 'ECOM', check: 'enabled', limit: null, totalBefore: null, debit: 150000 } } }, false),
    /→ 05 DO_NOT_HONOR \(control_off: ECOM enabled\)$/)
  t.match(paymentLine('groceries', '10.00', { responseCode: '00', responseDescription: 'TRANSACTION_APPROVED' }, { status: 200, body: { reason: 'approved', ruleId: null, control: null } }, false),
    /→ 00 TRANSACTION_APPROVED \(approved\)$/)
})
