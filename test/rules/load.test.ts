// Loading a directory: which files, in which order, and the version of the set.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadRuleSet, ruleFileBytesMax } from '../../src/rules/load.js'
import { emptyRuleSet } from '../../src/rules/manager.js'
import { facts, tempDir } from './helpers.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

t.test('the shipped default set loads', async t => {
  const r = await loadRuleSet(join(root, 'rules'), { timezone: 'Asia/Kolkata' })
  if (!r.ok) return t.fail(JSON.stringify(r.errors))
  t.ok(r.set.rules.length >= 5)
  t.equal(r.set.needsRisk, false, 'the default set does not call the risk service')
  for (const rule of r.set.rules as Array<{ id: string, description?: string }>) {
    t.ok(typeof rule.description === 'string' && rule.description.length > 0, `${rule.id} has a description`)
  }
  t.equal(r.set.evaluate(facts({ mcc: '7995' }), 0).decline?.code, '05', 'gambling is declined')
  t.equal(r.set.evaluate(facts({ mcc: '5411', channel: 'POS' }), 0).decline, null)
})

t.test('only top-level *.json files not starting with a dot, in name order', async t => {
  const r = await loadRuleSet(join(root, 'test/fixtures/rules-good'), { timezone: 'UTC' })
  if (!r.ok) return t.fail(JSON.stringify(r.errors))
  t.same(r.files, ['10-every-operator.json', '20-combinators.json'])
  t.equal(r.set.needsRisk, true)
  t.equal((r.set.rules[0] as { id: string }).id, 'op-eq')
})

t.test('name order is code-unit order, whatever the locale', async t => {
  const dir = await tempDir(t)
  const rule = (id: string): string => JSON.stringify({ rules: [{ id, then: { decline: '05' } }] })
  await writeFile(join(dir, 'b.json'), rule('b'))
  await writeFile(join(dir, 'B.json'), rule('B'))
  await writeFile(join(dir, '10.json'), rule('ten'))
  await writeFile(join(dir, '9.json'), rule('nine'))
  const r = await loadRuleSet(dir, { timezone: 'UTC' })
  if (!r.ok) return t.fail(JSON.stringify(r.errors))
  t.same(r.files, ['10.json', '9.json', 'B.json', 'b.json'])
  t.equal(r.set.evaluate({}, 0).decline?.ruleId, 'ten')
})

t.test('version: a short sha256 of the content, stable, changing with content', async t => {
  const dir = await tempDir(t)
  const text = JSON.stringify({ rules: [{ id: 'a', when: { mcc: { eq: '7995' } }, then: { decline: '05' } }] })
  await writeFile(join(dir, '10-a.json'), text)
  const v1 = await loadRuleSet(dir, { timezone: 'UTC' })
  const v1again = await loadRuleSet(dir, { timezone: 'UTC' })
  await writeFile(join(dir, '10-a.json'), text.replace('7995', '7800'))
  const v2 = await loadRuleSet(dir, { timezone: 'UTC' })
  if (!v1.ok || !v1again.ok || !v2.ok) return t.fail('should load')
  t.match(v1.set.version, /^[0-9a-f]{12}$/)
  t.equal(v1.set.version, v1again.set.version, 'same files, same version')
  t.not(v2.set.version, v1.set.version, 'an edit gives a new version')
  const empty = await loadRuleSet(await tempDir(t), { timezone: 'UTC' })
  if (!empty.ok) return t.fail('an empty directory is an empty set')
  t.equal(empty.set.rules.length, 0)
  t.equal(empty.set.version, emptyRuleSet().version)
})

t.test('a byte-order mark is tolerated', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-a.json'), '\ufeff' + JSON.stringify({ rules: [{ id: 'a', then: { decline: '05' } }] }))
  t.ok((await loadRuleSet(dir, { timezone: 'UTC' })).ok)
})

t.test('directory and file problems are errors too', async t => {
  const missing = await loadRuleSet('/nonexistent/extauth-rules', { timezone: 'UTC' })
  t.same(missing.ok ? [] : missing.errors.map(e => e.code), ['RULE_DIR_UNREADABLE'])
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-big.json'), ' '.repeat(ruleFileBytesMax + 1))
  const big = await loadRuleSet(dir, { timezone: 'UTC' })
  t.same(big.ok ? [] : big.errors.map(e => [e.file, e.code]), [['10-big.json', 'RULE_FILE_TOO_LARGE']])
})

t.test('too many rules, too many errors', async t => {
  const dir = await tempDir(t)
  const rules = Array.from({ length: 1001 }, (_, i) => ({ id: `r${i}`, then: { decline: '05' } }))
  await writeFile(join(dir, '10-a.json'), JSON.stringify({ rules }))
  const many = await loadRuleSet(dir, { timezone: 'UTC' })
  t.same(many.ok ? [] : many.errors.map(e => e.code), ['RULE_SET_TOO_LARGE'])
  const bad = Array.from({ length: 150 }, (_, i) => ({ id: `r${i}`, then: { decline: '99' } }))
  await writeFile(join(dir, '10-a.json'), JSON.stringify({ rules: bad }))
  const r = await loadRuleSet(dir, { timezone: 'UTC' })
  if (r.ok) return t.fail('should be refused')
  t.equal(r.errors.length, 101)
  t.equal(r.errors[100]?.code, 'RULE_ERRORS_TRUNCATED')
})
