// Lines a merge left behind: `<<<<<<< ours`, `|||||||` (diff3), `=======`, `>>>>>>> theirs` at the start of a
// line. A lone `=======` is a Markdown heading underline, so it counts only inside an opened `<<<<<<<` block.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

export interface Marker {
  file: string
  line: number
  text: string
}

const OPEN = /^<{7}(?: |$)/
const BASE = /^\|{7}(?: |$)/
const MIDDLE = /^={7}$/
const CLOSE = /^>{7}(?: |$)/

/** The conflict markers of one text, 1-based lines. */
export function markersIn (file: string, text: string): Marker[] {
  const found: Marker[] = []
  let open = false
  text.split(/\r?\n/).forEach((line, i) => {
    const hit = OPEN.test(line) || CLOSE.test(line) || BASE.test(line) || (open && MIDDLE.test(line))
    if (OPEN.test(line)) open = true
    if (CLOSE.test(line)) open = false
    if (hit) found.push({ file, line: i + 1, text: line })
  })
  return found
}

/** The files a marker must never reach: README.md and everything under docs/ and src/ (node_modules aside). */
export function checkedFiles (root: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules' || name.startsWith('.')) continue
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else out.push(relative(root, p).split(sep).join('/'))
    }
  }
  if (existsSync(join(root, 'README.md'))) out.push('README.md')
  for (const d of ['docs', 'src']) if (existsSync(join(root, d))) walk(join(root, d))
  return out
}

export function conflictMarkers (root: string): Marker[] {
  return checkedFiles(root).flatMap((f) => markersIn(f, readFileSync(join(root, f), 'utf8')))
}
