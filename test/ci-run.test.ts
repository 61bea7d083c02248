// .ci/run: its closing line "N passed, N failed", summed over the summaries of the three tap runs of `npm test`
// (the parallel files, then test/faults/ and test/browser/ one at a time) and read from saved logs; and the Node it tests on.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { REPO_ROOT } from './helpers/server-process.js'

const run = promisify(execFile)

async function closingLine (t: { testdir: (fixture: Record<string, string>) => string }, log: string): Promise<string> {
  const dir = t.testdir({ 'npm-test.log': '' })
  const file = join(dir, 'npm-test.log')
  await writeFile(file, log)
  const { stdout } = await run('bash', [join(REPO_ROOT, '.ci/run'), '--summarize', file])
  return stdout.trim()
}

const PARALLEL = [
  'ok 1 - test/config.test.ts # time=2500ms',
  '    # { total: 9, pass: 9 }',
  '# { total: 4474, pass: 4472, fail: 1, skip: 1 }',
  '# time=70000ms'
].join('\n')
const FAULTS = [
  '> extauth@0.1.0 test:faults',
  '> tap --jobs 1 test/faults/overload.test.ts',
  'ok 1 - test/faults/overload.test.ts # time=10000ms',
  '# { total: 300, pass: 297, fail: 2, todo: 1 }',
  '# time=35000ms'
].join('\n')
const BROWSER = [
  '> extauth@0.1.0 test:browser',
  '> tap --jobs 1 test/browser/*.test.ts',
  'ok 1 - test/browser/console.test.ts # time=40000ms',
  '# { total: 31, pass: 30, fail: 1 }',
  '# time=41000ms'
].join('\n')

t.test('the three runs are counted, subtests\' own summaries are not', async (t) => {
  t.equal(await closingLine(t, `${PARALLEL}\n${FAULTS}\n${BROWSER}\n`), '4799 passed, 4 failed, 2 skipped')
  t.equal(await closingLine(t, '# { total: 5, pass: 5 }\n# { total: 7, pass: 7 }\n# { total: 1, pass: 1 }\n'), '13 passed, 0 failed')
})

t.test('a run that printed no summary is reported', async (t) => {
  t.equal(await closingLine(t, `${PARALLEL}\n`), 'ci: only 1 of 3 tap runs printed a summary\n4472 passed, 1 failed, 1 skipped')
  t.equal(await closingLine(t, `${PARALLEL}\n${FAULTS}\n`), 'ci: only 2 of 3 tap runs printed a summary\n4769 passed, 3 failed, 2 skipped')
  t.match(await closingLine(t, 'error TS2322: nope\n'), /^ci: no tap summary in the output/)
})

t.test('the suite runs on the Node production runs', async (t) => {
  const wanted = (await readFile(join(REPO_ROOT, '.node-version'), 'utf8')).trim()
  const major = wanted.split('.')[0]
  t.match(wanted, /^\d+\.\d+\.\d+$/, '.node-version names one exact version')
  const dockerfile = await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8')
  t.match(dockerfile, new RegExp(`^ARG NODE_IMAGE=node:${major}-`, 'm'), 'the image runs the same major version')
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
  t.match(pkg.engines.node, new RegExp(`^>=${major}\\.\\d+\\.\\d+ <${Number(major) + 1}$`), 'engines names that major version alone')
  // .ci/run puts Node 22 first on PATH where the machine's is older; a developer does the same
  t.equal(process.versions.node.split('.')[0], major, `run on Node ${major}: export PATH="$(bash .ci/node22):$PATH"`)
})
