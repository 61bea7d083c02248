// Checks that every relative link and #anchor in README.md and docs/**/*.md resolves, offline, with GitHub's
// heading slugs, so a moved or renamed section cannot leave a dead link behind; and that no merge left its
// conflict markers in README.md, docs/ or src/.
//   npm run check:links [-- --root <dir>]
// Exit code 0: every link resolves, no marker; 1: each dead link or marker is listed as file:line; 2: bad usage.
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { checkLinks } from './lib/markdown-links.js'
import { conflictMarkers } from './lib/conflict-markers.js'

let root = fileURLToPath(new URL('..', import.meta.url))
try {
  const { values } = parseArgs({ options: { root: { type: 'string' } } })
  if (values.root !== undefined) root = values.root
} catch (err) {
  console.error(`check-links: ${(err as Error).message}\nusage: check-links [--root <dir>]`)
  process.exit(2)
}

const report = checkLinks(root)
for (const d of report.dead) console.error(`${d.file}:${d.line}: ${d.target}: ${d.problem}`)
const markers = conflictMarkers(root)
for (const m of markers) console.error(`${m.file}:${m.line}: conflict marker left by a merge: ${m.text}`)
if (report.dead.length > 0) {
  console.error(`check-links: ${report.dead.length} dead link(s) of ${report.links} in ${report.files.length} file(s)`)
}
if (markers.length > 0) console.error(`check-links: ${markers.length} conflict marker line(s)`)
if (report.dead.length > 0 || markers.length > 0) process.exit(1)
console.log(`check-links: ${report.links} links in ${report.files.length} file(s), all resolve`)
