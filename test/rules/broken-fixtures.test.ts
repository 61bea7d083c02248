// Every case in test/fixtures/rules-broken/<case>/ holds a rules/ folder that must be refused with exactly
// the errors its expected.json lists (in order): {file, ruleId, code, path?, reasonContains?, hintContains?,
// line?, column?}. The never-* cases are rules that would load yet never match.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { loadRuleSet } from '../../src/rules/load.js'

interface Expected {
  file: string
  ruleId: string | null
  code: string
  path?: string
  reasonContains?: string
  hintContains?: string
  line?: number
  column?: number
}

const base = fileURLToPath(new URL('../fixtures/rules-broken/', import.meta.url))
const cases = (await readdir(base)).sort()

t.ok(cases.length >= 12, 'the negative fixtures are there')

for (const name of cases) {
  t.test(name, async t => {
    const expected = JSON.parse(await readFile(join(base, name, 'expected.json'), 'utf8')) as Expected[]
    const r = await loadRuleSet(join(base, name, 'rules'), { timezone: 'UTC' })
    if (r.ok) return t.fail('the set loaded; it must be refused')
    t.same(r.errors.map(e => e.code), expected.map(e => e.code), 'the expected error codes, in order')
    expected.forEach((want, i) => {
      const got = r.errors[i]
      if (got === undefined) return
      t.equal(got.file, want.file, `error ${i}: file`)
      t.equal(got.ruleId, want.ruleId, `error ${i}: ruleId`)
      t.equal(got.code, want.code, `error ${i}: code`)
      if (want.path !== undefined) t.equal(got.path, want.path, `error ${i}: path`)
      if (want.reasonContains !== undefined) t.ok(got.reason.includes(want.reasonContains), `error ${i}: reason has ${want.reasonContains}; got ${got.reason}`)
      if (want.hintContains !== undefined) t.ok(got.hint?.includes(want.hintContains), `error ${i}: hint has ${want.hintContains}; got ${got.hint}`)
      if (want.line !== undefined) t.same([got.line, got.column], [want.line, want.column], `error ${i}: line and column`)
    })
  })
}
