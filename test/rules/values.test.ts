// The value and contradiction checks refuse only what can never match: tests that can hold still load, and
// a rule after an unconditional decline is a warning, not a refusal.
import { join } from 'node:path'
import t from 'tap'
import { compileRuleFiles } from '../../src/rules/load.js'
import { formatRuleError } from '../../src/rules/errors.js'
import { closest } from '../../src/rules/suggest.js'
import { jsonErrorOffset } from '../../src/rules/json-position.js'
import { compile, refusal } from './helpers.js'

const rule = (when: unknown) => ({ id: 'r', when, then: { decline: '05' } })
const codes = (when: unknown): string[] => refusal([rule(when)]).map(e => e.code)

t.test('values a field can hold load', async t => {
  for (const when of [
    { channel: { in: ['ECOM', 'POS-Contactless'] } },
    { channel: { startsWith: 'POS' } },
    { hour: { gte: 23 } },
    { hour: { lt: 1 } },
    { hour: { between: [22, 30] } },
    { dayOfWeek: { in: [1, 7] } },
    { mcc: { between: [3000, 3299] } },
    { mcc: { startsWith: '79' } },
    { currencyCode: { in: ['356', '840'] } },
    { amount: { gt: 100, lt: 102 } },
    { amount: { gte: 100, lte: 100 } },
    { mcc: { in: ['7995', '7800'], notIn: ['7800'] } },
    // a missing mcc satisfies notIn, so these can hold
    { mcc: { notIn: ['7995'], ne: '7800' } },
    { billingAmount: { exists: false, ne: 5 } },
    { any: [{ amount: { gt: 100 } }, { amount: { lt: 50 } }] },
    { not: { amount: { gt: 100, lt: 500 } } },
    { 'risk.ruleRating': { gte: -5 } }
  ]) t.same(codes(when), [], JSON.stringify(when))
})

t.test('values and combinations that can never hold are refused', async t => {
  t.same(codes({ channel: { eq: 'CNP' } }), ['RULE_VALUE_INVALID'])
  t.same(codes({ channel: { ne: 'ecom' } }), ['RULE_VALUE_INVALID'], 'ne with a value never sent is a mistake too')
  t.same(codes({ channel: { startsWith: 'CNP' } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ hour: { eq: 24 } }), ['RULE_VALUE_INVALID'])
  t.same(codes({ hour: { gt: 23 } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ hour: { lt: 0 } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ hour: { between: [24, 30] } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ dayOfWeek: { eq: 0 } }), ['RULE_VALUE_INVALID'])
  t.same(codes({ mcc: { gt: 9999 } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ mcc: { startsWith: '79950' } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ currencyCode: { eq: '35' } }), ['RULE_VALUE_INVALID'])
  t.same(codes({ amount: { lt: 0 } }), ['RULE_NEVER_MATCHES'])
  t.same(codes({ amount: { eq: -1 } }), ['RULE_VALUE_INVALID'])
  t.same(codes({ amount: { gt: 100, lte: 100 } }), ['RULE_CONDITION_CONTRADICTORY'])
  t.same(codes({ all: [{ amount: { gt: 100 } }, { all: [{ amount: { lt: 50 } }] }] }), ['RULE_CONDITION_CONTRADICTORY'], 'through nested all')
  t.same(codes({ mcc: { eq: '7995', between: [3000, 3299] } }), ['RULE_CONDITION_CONTRADICTORY'])
  t.same(codes({ hour: { notIn: Array.from({ length: 24 }, (_, i) => i) } }), ['RULE_CONDITION_CONTRADICTORY'])
  t.same(codes({ crossBorder: { eq: true, ne: true } }), ['RULE_CONDITION_CONTRADICTORY'])
  t.same(codes({ fee: { exists: false, gt: 0 } }), ['RULE_CONDITION_CONTRADICTORY'])
  t.same(codes({ merchantName: { startsWith: 'CASINO', eq: 'SHOP' } }), ['RULE_CONDITION_CONTRADICTORY'])
})

t.test('a rule after an unconditional decline is a warning; the set loads', async t => {
  const r = compileRuleFiles([{
    name: '10-a.json',
    text: JSON.stringify({
      rules: [
        { id: 'limit-first', when: { channel: { eq: 'ATM' } }, limit: { measure: 'count', per: 'card', window: 'day', max: 3 }, then: { decline: '65' } },
        { id: 'block-all', then: { decline: '05' } },
        { id: 'never-reached', when: { mcc: { eq: '7995' } }, then: { decline: '05' } },
        { id: 'watch', mode: 'shadow', when: { mcc: { eq: '6051' } }, then: { decline: '05' } }
      ]
    })
  }, { name: '20-b.json', text: JSON.stringify({ rules: [{ id: 'later-file', when: { amount: { gt: 5 } }, then: { decline: '61' } }] }) }], { timezone: 'UTC' })
  t.ok(r.ok)
  if (!r.ok) return
  t.same(r.warnings.map(w => [w.code, w.file, w.ruleId]), [['RULE_UNREACHABLE', '10-a.json', 'never-reached'], ['RULE_UNREACHABLE', '20-b.json', 'later-file']],
    'enforce rules after it, in any file; not the shadow rule, not the rule before')
  t.match(r.warnings[0]?.reason, /"block-all"/)
  t.match(r.warnings[0]?.hint, /give "block-all" a "when"/)
  t.same(compile([{ id: 'a', when: { mcc: { eq: '7995' } }, then: { decline: '05' } }]).rules.length, 1)
})

t.test('did you mean', async t => {
  t.equal(closest('chanel', ['channel', 'mcc']), 'channel')
  t.equal(closest('Channel', ['channel', 'mcc']), 'channel')
  t.equal(closest('whne', ['when', 'then']), 'when')
  t.equal(closest('merchantCategory', ['mcc', 'merchantName']), null, 'nothing close: no guess')
  const [e] = refusal([rule({ chanel: { eq: 'ATM' } })])
  t.match(formatRuleError(e as never), /RULE_FIELD_UNKNOWN: unknown field: "chanel" \(did you mean `channel`\? fields: customerId, /)
})

t.test('JSON syntax errors give line and column', async t => {
  const text = '{\n  "rules": [\n    { "id": "a", "then": { "decline": "05" } },\n  ]\n}\n'
  const r = compileRuleFiles([{ name: '10-a.json', text }], { timezone: 'UTC' })
  t.notOk(r.ok)
  if (r.ok) return
  const e = r.errors[0]
  t.same([e?.code, e?.line, e?.column], ['RULE_JSON_INVALID', 4, 3])
  t.match(formatRuleError(e as never), /^10-a\.json:4:3: RULE_JSON_INVALID: the file is not valid JSON: line 4, column 3: /)
  t.equal(jsonErrorOffset('{"a": [1, 2]}'), -1, 'a valid text has no error offset')
  t.equal(jsonErrorOffset('{"a": 1'), 7, 'an early end is at the end')
  t.equal(jsonErrorOffset('{"a": 01}'), 7, 'a leading zero')
})

t.test('the service logs the warnings of a set it loads', async t => {
  const { writeFile } = await import('node:fs/promises')
  const { RulesManager } = await import('../../src/rules/manager.js')
  const { createLogger } = await import('../../src/logger.js')
  const { logCapture } = await import('../helpers/app.js')
  const { tempDir } = await import('./helpers.js')
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-a.json'), JSON.stringify({ rules: [{ id: 'block-all', then: { decline: '05' } }, { id: 'later', when: { mcc: { eq: '7995' } }, then: { decline: '05' } }] }))
  const { stream, logs } = logCapture()
  const m = new RulesManager({ dir, timezone: 'UTC', log: createLogger('info', stream) })
  await m.start()
  t.teardown(() => { m.close() })
  await new Promise(resolve => setImmediate(resolve))
  const line = logs.find(l => l.msg === 'rule set loaded with warnings') as { warnings?: Array<{ code: string, ruleId: string }> } | undefined
  t.same(line?.warnings?.map(w => [w.code, w.ruleId]), [['RULE_UNREACHABLE', 'later']])
})
