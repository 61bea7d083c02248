// Relative links and #anchors of Markdown files, resolved the way GitHub renders them: a link must name a file
// or folder that exists, and an anchor must match a heading of the target page (GitHub's slugs, "-1", "-2" for
// repeated headings) or an explicit <a id>/<a name>. External links (any scheme) are not followed: the check
// runs offline. Code (fenced blocks and inline spans) is not read for links, as GitHub does not render them.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'

export interface Link {
  file: string
  line: number
  target: string
}

export interface DeadLink extends Link {
  problem: string
}

export interface LinkReport {
  files: string[]
  links: number
  dead: DeadLink[]
}

/** GitHub's heading id: lower case, punctuation dropped (letters, digits, `_`, `-` and spaces kept), spaces → `-`. */
export function slugOf (headingText: string): string {
  return plainText(headingText).trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-')
}

/** What a heading shows once rendered: code spans keep their text, links their label, emphasis marks go. */
function plainText (md: string): string {
  return md
    .replace(/(`+)(.+?)\1/g, (_m, _ticks: string, code: string) => code.trim())
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*{1,3}|~~)(?=\S)(.+?)(?<=\S)\1/g, '$2')
}

interface Scanned {
  links: Link[]
  anchors: Set<string>
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/
const ATX = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/
const INLINE_LINK = /!?\[((?:[^\]\\]|\\.)*)\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g
const REFERENCE_DEF = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/
const HTML_ID = /<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']/gi
const HTML_HREF = /<(?:a|img)\s[^>]*\b(?:href|src)\s*=\s*["']([^"']+)["']/gi

function withoutCodeSpans (line: string): string {
  return line.replace(/(`+)(.+?)\1/g, (m) => ' '.repeat(m.length))
}

/** The links of one Markdown text and the anchors it defines. */
export function scanMarkdown (file: string, text: string): Scanned {
  const links: Link[] = []
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const addHeading = (raw: string): void => {
    const base = slugOf(raw)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }

  const lines = text.split(/\r?\n/)
  let fence: string | null = null
  let previous = ''
  lines.forEach((line, i) => {
    const open = FENCE.exec(line)
    if (fence !== null) {
      if (open !== null && open[1]?.[0] === fence[0] && (open[1]?.length ?? 0) >= fence.length && line.trim() === open[1]) fence = null
      previous = ''
      return
    }
    if (open?.[1] !== undefined) {
      fence = open[1]
      previous = ''
      return
    }
    const atx = ATX.exec(line)
    if (atx !== null) addHeading(atx[1] ?? '')
    else if (SETEXT.test(line) && isParagraphLine(previous)) addHeading(previous.trim())

    const code = withoutCodeSpans(line)
    for (const m of code.matchAll(INLINE_LINK)) links.push({ file, line: i + 1, target: unbracket(m[2] ?? '') })
    const def = REFERENCE_DEF.exec(code)
    if (def?.[1] !== undefined) links.push({ file, line: i + 1, target: unbracket(def[1]) })
    for (const m of code.matchAll(HTML_HREF)) links.push({ file, line: i + 1, target: m[1] ?? '' })
    for (const m of code.matchAll(HTML_ID)) if (m[1] !== undefined) anchors.add(m[1])
    previous = line
  })
  return { links, anchors }
}

function isParagraphLine (line: string): boolean {
  return line.trim() !== '' && !/^ {0,3}([#>|*+-]|\d+[.)])/.test(line)
}

function unbracket (target: string): string {
  return target.startsWith('<') && target.endsWith('>') ? target.slice(1, -1) : target
}

/** README.md and every Markdown file under docs/, as paths relative to root. */
export function documentationFiles (root: string): string[] {
  const files: string[] = []
  if (existsSync(join(root, 'README.md'))) files.push('README.md')
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name)
      if (statSync(join(root, path)).isDirectory()) walk(path)
      else if (name.endsWith('.md')) files.push(path.split(sep).join('/'))
    }
  }
  if (existsSync(join(root, 'docs'))) walk('docs')
  return files
}

/** Checks every relative link and anchor of the given files (default: documentationFiles(root)). */
export function checkLinks (root: string, files: string[] = documentationFiles(root)): LinkReport {
  const absRoot = resolve(root)
  const cache = new Map<string, Scanned>()
  const scan = (abs: string): Scanned => {
    let s = cache.get(abs)
    if (s === undefined) {
      s = scanMarkdown(relative(absRoot, abs), readFileSync(abs, 'utf8'))
      cache.set(abs, s)
    }
    return s
  }

  const dead: DeadLink[] = []
  let count = 0
  for (const file of files) {
    const abs = join(absRoot, file)
    for (const link of scan(abs).links) {
      count++
      const problem = problemOf(link.target, abs, absRoot, scan)
      if (problem !== null) dead.push({ ...link, file, problem })
    }
  }
  return { files, links: count, dead }
}

function problemOf (target: string, from: string, root: string, scan: (abs: string) => Scanned): string | null {
  if (target === '') return 'empty link'
  // a scheme (https:, mailto:) or a protocol-relative URL: not ours to resolve offline
  if (/^[a-z][a-z\d+.-]*:/i.test(target) || target.startsWith('//')) return null
  const hash = target.indexOf('#')
  const pathPart = (hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '')
  const fragment = hash < 0 ? '' : target.slice(hash + 1)
  let path: string
  let fragmentText: string
  try {
    path = decodeURIComponent(pathPart)
    fragmentText = decodeURIComponent(fragment)
  } catch {
    return 'not a valid URL'
  }

  const abs = path === '' ? from : path.startsWith('/') ? join(root, path) : resolve(dirname(from), path)
  if (abs !== root && !abs.startsWith(root + sep)) return 'points outside the repository'
  if (!existsSync(abs)) return `no such file: ${relative(root, abs)}`
  if (fragmentText === '' || !abs.endsWith('.md') || statSync(abs).isDirectory()) return null
  if (scan(abs).anchors.has(fragmentText)) return null
  return `no heading #${fragmentText} in ${relative(root, abs)}`
}
