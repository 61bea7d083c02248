// Checks that every relative link and #anchor in README.md and docs/**/*.md resolves, offline, with GitHub's
// heading slugs, so a moved or renamed section cannot leave a dead link behind; and that no merge left its
// conflict markers in README.md, docs/ or src/.
//   npm run check:links [-- --root <dir>]
// Exit code 0: every link resolves, no marker; 1: each dead link or marker is listed as file:line; 2: bad usage.
//
// The links are remark-validate-links' (remark's Markdown parser, github-slugger's slugs, files and headings
// across the whole set of pages) run through unified-engine; the conflict markers, which no Markdown tool
// looks for (they are in src/ too), are this repository's own check (scripts/lib/conflict-markers.ts).
import { isAbsolute, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { remark } from 'remark'
import remarkValidateLinks from 'remark-validate-links'
import { engine } from 'unified-engine'
import type { Plugin } from 'unified'
import type { VFile } from 'vfile'
import { conflictMarkers } from './lib/conflict-markers.js'

let root = fileURLToPath(new URL('..', import.meta.url))
try {
  const { values } = parseArgs({ options: { root: { type: 'string' } } })
  if (values.root !== undefined) root = values.root
} catch (err) {
  console.error(`check-links: ${(err as Error).message}\nusage: check-links [--root <dir>]`)
  process.exit(2)
}

const files = await new Promise<VFile[]>((resolve, reject) => {
  engine({
    processor: remark(),
    cwd: root,
    files: ['README.md', 'docs'],
    extensions: ['md'],
    // links are checked offline, against the tree: no Git remote is asked what absolute links are ours
    // its type is remark's, not the engine's generic plugin's
    plugins: [[remarkValidateLinks as unknown as Plugin, { repository: false }]],
    output: false,
    out: false,
    quiet: true,
    silentlyIgnore: true,
    ignoreName: '.remarkignore',
    // the report is ours, below: file:line, the way the rest of the checks print
    reporter: () => '',
    color: false
  }, (err, _code, context) => {
    if (err != null) reject(err)
    else resolve(context?.files ?? [])
  })
})

const dead: string[] = []
for (const file of files) {
  const path = isAbsolute(file.path) ? relative(root, file.path) : file.path
  for (const m of file.messages) {
    dead.push(`${path}:${m.line ?? 0}: ${m.reason}`)
  }
}
for (const d of dead) console.error(d)
const markers = conflictMarkers(root)
for (const m of markers) console.error(`${m.file}:${m.line}: conflict marker left by a merge: ${m.text}`)
if (dead.length > 0) console.error(`check-links: ${dead.length} dead link(s) in ${files.length} file(s)`)
if (markers.length > 0) console.error(`check-links: ${markers.length} conflict marker line(s)`)
if (dead.length > 0 || markers.length > 0) process.exit(1)
console.log(`check-links: the links of ${files.length} file(s) all resolve; no conflict marker`)
