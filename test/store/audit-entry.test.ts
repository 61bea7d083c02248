// An audit record's card controls read in the API's words wherever the record leaves the store: the trail's
// answer and the audit.recorded event, never the store's hash fields ("ECOM|enabled": "0").
import t from 'tap'
import { auditEntryOf, auditStateOf } from '../../src/store/audit-entry.js'
import { eventBody } from '../../src/store/outbox-entry.js'

t.test('the card controls\' hash fields become the controls\' shape', async (t) => {
  t.same(auditStateOf({ 'ECOM|enabled': '0', 'ATM|dailyMax': '2500000', 'ATM|perTransactionMax': '' }), { ECOM: { enabled: false }, ATM: { dailyMax: 2500000, perTransactionMax: null } })
  t.same(auditStateOf({ available: '100' }), { available: '100' }, 'any other state as it is')
  t.same(auditStateOf({}), {}, 'nothing of its own: empty')
  t.equal(auditStateOf(null), null)
  t.same(auditEntryOf({ id: 'a', before: { 'POS|enabled': '1' }, after: { 'POS|enabled': '0' } }), { id: 'a', before: { POS: { enabled: true } }, after: { POS: { enabled: false } } })
})

t.test('the audit.recorded event carries the same shape', async (t) => {
  const rec = { id: 'a1', keyId: 'ops', route: 'PATCH /admin/v1/customers/:urn/cards/:last4/controls', scope: 'controls:write', requestId: 'r', target: { urn: 'U1', last4: '4321' }, outcome: 'done', before: { 'ECOM|enabled': '1' }, after: { 'ECOM|enabled': '0' }, atMs: 1_763_900_000_123 }
  const body = eventBody(0, '1763900000123-0', { t: 'audit.recorded', u: 'U1', d: JSON.stringify(rec) })
  t.match(body.data, { urn: 'U1', id: 'a1', before: { ECOM: { enabled: true } }, after: { ECOM: { enabled: false } } })
  t.notMatch(JSON.stringify(body), /\|enabled/)
})
