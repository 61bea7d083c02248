// The documentation link checker (scripts/check-links.ts): GitHub's heading slugs, and a dead file or a dead
// anchor reported with its place and failing the run, on fixture trees under test/fixtures/links/.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { checkLinks, documentationFiles, scanMarkdown, slugOf } from '../../scripts/lib/markdown-links.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const fixtures = join(root, 'test/fixtures/links')

async function runCli (fixture: string): Promise<{ code: number, stdout: string, stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath,
      ['--import', 'tsx', join(root, 'scripts/check-links.ts'), '--root', join(fixtures, fixture)], { cwd: root })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number, stdout: string, stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

t.test('slugs are GitHub\'s', async t => {
  t.equal(slugOf('Set up'), 'set-up')
  t.equal(slugOf('What happens when…'), 'what-happens-when')
  t.equal(slugOf('Run it with Redis: docker compose'), 'run-it-with-redis-docker-compose')
  t.equal(slugOf('`npm run load` (Node, no k6 needed)'), 'npm-run-load-node-no-k6-needed')
  t.equal(slugOf('**Bold** and [a link](x.md) in `GRACE_MS`'), 'bold-and-a-link-in-grace_ms')
  t.equal(slugOf('Two  spaces'), 'two--spaces', 'each space becomes a hyphen')
})

t.test('repeated headings get -1, -2; setext headings and <a id> count', async t => {
  const { anchors } = scanMarkdown('x.md', '# A\n\n## Notes\n\n## Notes\n\n## Notes\n\nTitle\n-----\n\n<a name="kept"></a>\n\n```\n# not a heading\n```\n')
  t.same([...anchors].sort(), ['a', 'kept', 'notes', 'notes-1', 'notes-2', 'title'])
})

t.test('links inside code are not read', async t => {
  const { links } = scanMarkdown('x.md', 'a `[x](gone.md)` b [y](here.md)\n\n~~~\n[z](gone.md)\n~~~\n[w]: ref.md\n')
  t.same(links.map(l => l.target), ['here.md', 'ref.md'])
})

t.test('a tree whose links all resolve passes', async t => {
  const dir = join(fixtures, 'good')
  t.same(documentationFiles(dir), ['README.md', 'docs/guide.md', 'docs/sub/b.md'])
  const report = checkLinks(dir)
  t.same(report.dead, [])
  // README 11 (9 inline, the image, the reference; none of the two in code), guide.md 3
  t.equal(report.links, 14, 'every link outside code is read, external ones included')
  const cli = await runCli('good')
  t.equal(cli.code, 0, cli.stderr)
})

t.test('a link to a missing file fails, naming file and line', async t => {
  const report = checkLinks(join(fixtures, 'dead-file'))
  t.same(report.dead.map(d => [d.file, d.line, d.target, d.problem]),
    [['README.md', 3, 'docs/runbook.md', 'no such file: docs/runbook.md']])
  const cli = await runCli('dead-file')
  t.equal(cli.code, 1)
  t.match(cli.stderr, 'README.md:3: docs/runbook.md: no such file')
})

t.test('an anchor with no heading fails, in another page and in the same page', async t => {
  const report = checkLinks(join(fixtures, 'dead-anchor'))
  t.same(report.dead.map(d => [d.file, d.line, d.target, d.problem]), [
    ['README.md', 3, 'docs/guide.md#benchmark', 'no heading #benchmark in docs/guide.md'],
    ['docs/guide.md', 5, '#configuration', 'no heading #configuration in docs/guide.md']
  ])
  const cli = await runCli('dead-anchor')
  t.equal(cli.code, 1)
  t.match(cli.stderr, 'README.md:3: docs/guide.md#benchmark: no heading #benchmark')
})
