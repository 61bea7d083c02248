// rules/rules.schema.json is what the validator's definitions give (regenerate with npm run rules:schema),
// an editor checking a file against it agrees with the loader on the files we ship and on the mistakes it
// can express, and a rule file that names it still loads.
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { Ajv } from 'ajv'
import { ruleFileJsonSchemaText } from '../../src/rules/editor-schema.js'
import { FIELD_NAMES } from '../../src/rules/fields.js'
import { DECLINE_CODES } from '../../src/rules/schema.js'
import { loadRuleSet } from '../../src/rules/load.js'
import { tempDir } from './helpers.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const schemaPath = join(root, 'rules', 'rules.schema.json')
const checkedIn = await readFile(schemaPath, 'utf8')
const schema = JSON.parse(checkedIn) as Record<string, unknown>
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema)

t.test('the checked-in schema is current', async t => {
  t.equal(checkedIn, ruleFileJsonSchemaText(), 'rules/rules.schema.json is not current: run npm run rules:schema')
})

t.test('it names every field, operator and decline code', async t => {
  const defs = schema.definitions as Record<string, { properties?: Record<string, unknown> }>
  const condition = Object.keys(defs.condition?.properties ?? {})
  t.same(condition.sort(), [...FIELD_NAMES, 'all', 'any', 'not'].sort())
  t.same(Object.keys(defs['field:hour']?.properties ?? {}), ['eq', 'ne', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'between', 'exists'])
  t.same(Object.keys(defs['field:merchantName']?.properties ?? {}), ['eq', 'ne', 'in', 'notIn', 'startsWith', 'exists'])
  t.match(checkedIn, new RegExp(DECLINE_CODES.map(c => `"const": "${c}"`).join('[^]*')))
})

t.test('every shipped rule file names the schema and passes it', async t => {
  const dir = join(root, 'rules')
  const names = (await readdir(dir)).filter(n => n.endsWith('.json') && !n.endsWith('.schema.json'))
  t.ok(names.length >= 4)
  for (const n of names) {
    const doc = JSON.parse(await readFile(join(dir, n), 'utf8')) as Record<string, unknown>
    t.equal(doc.$schema, './rules.schema.json', `${n} references the schema`)
    t.ok(validate(doc), `${n}: ${JSON.stringify(validate.errors)}`)
  }
  const loaded = await loadRuleSet(dir, { timezone: 'UTC' })
  t.ok(loaded.ok, 'the shipped set loads, the schema file beside it not taken for a rule file')
  if (loaded.ok) t.notOk(loaded.files.includes('rules.schema.json'))
})

t.test('the good fixtures pass it', async t => {
  const dir = fileURLToPath(new URL('../fixtures/rules-good/', import.meta.url))
  for (const n of ['10-every-operator.json', '20-combinators.json']) {
    t.ok(validate(JSON.parse(await readFile(join(dir, n), 'utf8'))), `${n}: ${JSON.stringify(validate.errors)}`)
  }
})

t.test('the mistakes a schema can express are flagged by it as by the loader', async t => {
  const broken = fileURLToPath(new URL('../fixtures/rules-broken/', import.meta.url))
  for (const name of ['never-channel', 'never-hour', 'never-day-of-week', 'never-mcc-five-digits', 'currency-example',
    'unknown-field', 'unknown-operator', 'unknown-property', 'wrong-operand-type', 'bad-decline-code', 'near-miss']) {
    const dir = join(broken, name, 'rules')
    for (const n of await readdir(dir)) {
      t.notOk(validate(JSON.parse(await readFile(join(dir, n), 'utf8'))), `${name}/${n} fails the schema`)
    }
  }
})

t.test('a rule file may carry "$schema"', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-a.json'), JSON.stringify({ $schema: './rules.schema.json', rules: [{ id: 'a', when: { channel: { eq: 'ATM' } }, then: { decline: '05' } }] }))
  await writeFile(join(dir, 'rules.schema.json'), checkedIn)
  const r = await loadRuleSet(dir, { timezone: 'UTC' })
  t.ok(r.ok, JSON.stringify(r))
  if (r.ok) t.same(r.files, ['10-a.json'])
})
