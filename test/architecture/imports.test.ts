// The one-way rule of src/: every import of our own files is checked against the table "The dependency rule"
// of docs/development/architecture.md (read from the page itself), and each import it does not allow is
// printed as src/<file>:<line>. The check is proven to fail on a tree with upward imports of every form and on
// the real tree with one allowed edge taken out of the table.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { checkLayers, cycleOf, formatOffence, importsOf, readLayerTable, sourceFiles, type Layer } from '../../scripts/lib/import-layers.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const src = join(root, 'src')
const page = readFileSync(join(root, 'docs/development/architecture.md'), 'utf8')
const table = readLayerTable(page)

t.test('every import in src/ points the way the table allows', async t => {
  const report = checkLayers(src, table)
  t.ok(report.files > 100 && report.imports > 300, `read ${report.files} files, ${report.imports} imports of ours`)
  for (const f of report.unplaced) t.fail(`src/${f}: no row of the table names its folder`)
  // one failure line per offence, each naming the file, the line and the two layers
  for (const o of report.offences) t.fail(formatOffence(o))
  t.equal(report.offences.length, 0, 'no import the table does not allow')
})

t.test('the table is one-way: no cycle among its rows', async t => {
  t.equal(cycleOf(table), null)
  t.ok(table.find(l => l.members.includes('domain/'))?.mayImport.length === 0, 'domain/ imports nothing of ours')
})

t.test('nothing imports the command line or the simulators', async t => {
  for (const layer of table) {
    t.notOk(layer.mayImport.includes('cli/') || layer.mayImport.includes('sim/'), `${layer.members.join(', ')} may not import cli/ or sim/`)
  }
})

t.test('outside src/adapters/, the adapters are reached through their index.ts', async t => {
  const offending: string[] = []
  for (const file of sourceFiles(src).filter(f => !f.startsWith('adapters/'))) {
    for (const site of importsOf(file, readFileSync(join(src, file), 'utf8'))) {
      if (site.target.startsWith('adapters/') && site.target !== 'adapters/index.ts') offending.push(`src/${file}:${site.line}: ${site.specifier}`)
    }
  }
  t.same(offending, [])
})

t.test('an upward import of any form is found and printed with its file and line', async t => {
  const dir = t.testdir({
    domain: { 'words.ts': "import { helper } from '../rules/helper.js'\nexport const w = helper\n" },
    rules: {
      'helper.ts': 'export const helper = 1\n',
      'engine.ts': [
        "import type { Pipeline } from '../decision/pipeline.js'",
        'import {',
        '  w',
        "} from '../domain/words.js'",
        "export { decide } from '../decision/pipeline.js'",
        "// import { x } from '../decision/pipeline.js' is a comment, not an import",
        "const s = \"from '../decision/pipeline.js'\"",
        "export async function load (): Promise<unknown> { return await import('../decision/pipeline.js') }",
        "export type P = Pipeline | typeof w | typeof s | import('../decision/pipeline.js').Pipeline",
        ''
      ].join('\n')
    },
    decision: { 'pipeline.ts': "import { helper } from '../rules/helper.js'\nexport type Pipeline = number\nexport const decide = helper\n" },
    'stray.ts': 'export const stray = 1\n'
  })
  const layers: Layer[] = [
    { members: ['decision/'], mayImport: ['rules/', 'domain/'], line: 1 },
    { members: ['rules/'], mayImport: ['domain/'], line: 2 },
    { members: ['domain/'], mayImport: [], line: 3 }
  ]
  const report = checkLayers(dir, layers)
  t.same(report.offences.map(formatOffence), [
    'src/domain/words.ts:1: domain/ may not import rules/ (../rules/helper.js)',
    'src/rules/engine.ts:1: rules/ may not import decision/ (../decision/pipeline.js)',
    'src/rules/engine.ts:5: rules/ may not import decision/ (../decision/pipeline.js)',
    'src/rules/engine.ts:8: rules/ may not import decision/ (../decision/pipeline.js)',
    'src/rules/engine.ts:9: rules/ may not import decision/ (../decision/pipeline.js)'
  ], 'import type, export from, import() and an import type node; comments and strings are not imports')
  t.same(report.unplaced, ['stray.ts'], 'a file no row names is reported')
})

t.test('the real tree fails when the table loses an edge it needs', async t => {
  const narrowed = table.map(l => l.members.includes('decision/') ? { ...l, mayImport: l.mayImport.filter(e => e !== 'rules/') } : l)
  const offences = checkLayers(src, narrowed).offences.map(formatOffence)
  t.ok(offences.length > 0)
  t.match(offences, [/^src\/decision\/pipeline\.ts:\d+: decision\/ may not import rules\/ \(\.\.\/rules\/[a-z-]+\.js\)$/])
})

t.test('a table with a cycle is refused, and the table is read from its Markdown', async t => {
  const md = [
    '# Page', '', '## The dependency rule', '', 'prose `not/` a row', '',
    '| layer | may import (of ours) | why |', '|---|---|---|',
    '| `src/rules/` | `domain/`, `time.ts` | pure |',
    '| `domain/` | nothing | the vocabulary; `rules/` here is prose of the third column |',
    '| `time.ts` | `rules/` | a cycle |',
    '', '## Next', '', '| `x/` | `y/` |'
  ].join('\n')
  const layers = readLayerTable(md)
  t.same(layers.map(l => [l.members, l.mayImport, l.line]), [
    [['rules/'], ['domain/', 'time.ts'], 9],
    [['domain/'], [], 10],
    [['time.ts'], ['rules/'], 11]
  ])
  t.same(cycleOf(layers), ['rules/', 'time.ts', 'rules/'])
  t.throws(() => readLayerTable('# Page\n'), /no heading/)
})
