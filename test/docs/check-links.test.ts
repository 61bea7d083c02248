// The documentation link checker (scripts/check-links.ts, remark-validate-links through unified-engine):
// GitHub's heading slugs, and a dead file or a dead anchor reported with its place and failing the run, on
// fixture trees under test/fixtures/links/.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'

const root = fileURLToPath(new URL('../../', import.meta.url))
const fixtures = join(root, 'test/fixtures/links')

async function runCli (dir: string): Promise<{ code: number, stdout: string, stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath,
      ['--import', 'tsx', join(root, 'scripts/check-links.ts'), '--root', dir], { cwd: root })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number, stdout: string, stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

t.test('a tree whose links all resolve passes: GitHub\'s slugs, repeated headings, setext headings, folders, references; code is not read', async t => {
  const cli = await runCli(join(fixtures, 'good'))
  t.equal(cli.code, 0, cli.stderr)
  t.match(cli.stdout, 'the links of 3 file(s) all resolve')
})

t.test('slugs as GitHub makes them', async t => {
  const dir = t.testdir({
    'README.md': '# P\n\n[a](docs/g.md#set-up) [b](docs/g.md#what-happens-when) [c](docs/g.md#npm-run-load-node-no-k6-needed) ' +
      '[d](docs/g.md#bold-and-a-link-in-grace_ms) [e](docs/g.md#notes-1) [f](docs/g.md#title)\n',
    docs: { 'g.md': '# Set up\n\n## What happens when…\n\n## `npm run load` (Node, no k6 needed)\n\n## **Bold** and [a link](g.md) in `GRACE_MS`\n\n## Notes\n\n## Notes\n\nTitle\n-----\n' }
  })
  const cli = await runCli(dir)
  t.equal(cli.code, 0, cli.stderr)
})

t.test('a link to a missing file fails, naming file and line', async t => {
  const cli = await runCli(join(fixtures, 'dead-file'))
  t.equal(cli.code, 1)
  t.match(cli.stderr, 'README.md:3: Cannot find file `docs/runbook.md`')
})

t.test('an anchor with no heading fails, in another page and in the same page', async t => {
  const cli = await runCli(join(fixtures, 'dead-anchor'))
  t.equal(cli.code, 1)
  t.match(cli.stderr, 'README.md:3: Cannot find heading for `#benchmark` in `docs/guide.md`')
  t.match(cli.stderr, 'docs/guide.md:5: Cannot find heading for `#configuration`')
})

t.test('links inside code are not read', async t => {
  const dir = t.testdir({ 'README.md': '# P\n\na `[x](gone.md)` b\n\n~~~\n[z](gone.md)\n~~~\n', docs: { 'g.md': '# G\n' } })
  const cli = await runCli(dir)
  t.equal(cli.code, 0, cli.stderr)
})
