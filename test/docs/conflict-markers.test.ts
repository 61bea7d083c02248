// A merge's conflict markers in README.md, docs/ or src/ fail `npm run check:links`, naming file and line;
// a Markdown heading underlined with `=======` does not.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { conflictMarkers, markersIn } from '../../scripts/lib/conflict-markers.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

async function runCli (dir: string): Promise<{ code: number, stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath,
      ['--import', 'tsx', join(root, 'scripts/check-links.ts'), '--root', dir], { cwd: root })
    return { code: 0, stderr }
  } catch (err) {
    const e = err as { code: number, stderr: string }
    return { code: e.code, stderr: e.stderr }
  }
}

const CONFLICTED = 'intro\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> events\nend\n'

t.test('the three marker lines of a conflict are found with their lines', async t => {
  t.same(markersIn('a.md', CONFLICTED).map(m => [m.line, m.text]),
    [[2, '<<<<<<< HEAD'], [4, '======='], [6, '>>>>>>> events']])
  t.same(markersIn('a.md', 'a\n<<<<<<< ours\nx\n||||||| base\ny\n=======\nz\n>>>>>>> theirs\n').map(m => m.line), [2, 4, 6, 8], 'diff3 style')
})

t.test('a setext heading and longer rules are not markers', async t => {
  t.same(markersIn('a.md', 'Title\n=======\n\ntext\n========\n<<<<<<<<\n'), [])
})

t.test('a docs or src tree with a marker fails the check; a clean one passes', async t => {
  const dir = t.testdir({
    'README.md': '# Project\n\nSee [the guide](docs/guide.md).\n',
    docs: { 'guide.md': '# Guide\n\n' + CONFLICTED },
    src: { 'a.ts': 'export const a = 1\n>>>>>>> main\n' },
    other: { 'b.md': CONFLICTED }
  })
  t.same(conflictMarkers(dir).map(m => `${m.file}:${m.line}`),
    ['docs/guide.md:4', 'docs/guide.md:6', 'docs/guide.md:8', 'src/a.ts:2'], 'only README, docs/ and src/ are read')
  const failed = await runCli(dir)
  t.equal(failed.code, 1)
  t.match(failed.stderr, 'docs/guide.md:4: conflict marker left by a merge: <<<<<<< HEAD')
  t.match(failed.stderr, 'src/a.ts:2: conflict marker')

  const clean = t.testdir({ 'README.md': '# Project\n', docs: { 'guide.md': 'Guide\n=======\n' } })
  const passed = await runCli(clean)
  t.equal(passed.code, 0, passed.stderr)
})

t.test('this repository has none', async t => {
  t.same(conflictMarkers(root), [])
})
