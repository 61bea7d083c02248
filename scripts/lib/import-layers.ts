// The one-way rule of src/ (docs/development/architecture.md, "The dependency rule"): every file belongs to
// one layer, and a layer imports only the layers its row names. The table is read from that page, so the
// page and the check cannot disagree; every import of our own files is read with TypeScript's parser
// (`import`, `import type`, `export … from`, `import()` with a literal path), comments and strings aside.
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative, sep } from 'node:path'
import ts from 'typescript'

/** A row of the table: the entries naming its members, and the entries it may import. */
export interface Layer {
  /** `http/` (a folder of src/) or `config.ts` (a file at the top of src/) */
  members: string[]
  /** entries in the same form */
  mayImport: string[]
  /** the table's line, for messages */
  line: number
}

export interface ImportSite {
  /** path under src/, `/`-separated */
  file: string
  line: number
  /** path under src/ of the imported file */
  target: string
  specifier: string
}

export interface Offence extends ImportSite {
  from: string
  to: string
}

const ENTRY = /`([^`]+)`/g

/**
 * The rows of the first Markdown table after the heading `heading`: column 1 names the layer's members,
 * column 2 what it may import, both as code spans (`rules/`, `time.ts`); other text is prose.
 */
export function readLayerTable (markdown: string, heading = 'The dependency rule'): Layer[] {
  const lines = markdown.split(/\r?\n/)
  const start = lines.findIndex((l) => new RegExp(`^#{1,6}\\s+${heading}\\s*$`).test(l))
  if (start < 0) throw new Error(`no heading "${heading}"`)
  const layers: Layer[] = []
  let inTable = false
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i] as string
    if (/^#{1,6}\s/.test(l)) break
    if (!l.startsWith('|')) { if (inTable) break; continue }
    inTable = true
    const cells = l.split('|').slice(1, -1).map((c) => c.trim())
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue
    const [who = '', what = ''] = cells
    const members = [...who.matchAll(ENTRY)].map((m) => m[1] as string).map(stripSrc)
    if (members.length === 0) continue // the header row
    const mayImport = [...what.matchAll(ENTRY)].map((m) => m[1] as string).map(stripSrc)
    layers.push({ members, mayImport, line: i + 1 })
  }
  if (layers.length === 0) throw new Error(`no table under "${heading}"`)
  return layers
}

function stripSrc (entry: string): string {
  return entry.replace(/^src\//, '')
}

/** Whether the entry (`rules/`, `config.ts`) covers the path under src/. */
function covers (entry: string, path: string): boolean {
  return entry.endsWith('/') ? path.startsWith(entry) : path === entry
}

/** The layer a path under src/ belongs to; the most specific entry wins (`rules/x.ts` over `rules/`). */
export function layerOf (layers: Layer[], path: string): Layer | undefined {
  let best: { layer: Layer, len: number } | undefined
  for (const layer of layers) {
    for (const m of layer.members) {
      if (covers(m, path) && (best === undefined || m.length > best.len)) best = { layer, len: m.length }
    }
  }
  return best?.layer
}

/** Every `.ts` and `.tsx` file under `dir`, as `/`-separated paths relative to it. */
export function sourceFiles (dir: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else if ((name.endsWith('.ts') || name.endsWith('.tsx')) && !name.endsWith('.d.ts')) out.push(relative(dir, p).split(sep).join('/'))
    }
  }
  walk(dir)
  return out
}

/** The relative imports of one file (static, type-only, re-exports and literal dynamic imports). */
export function importsOf (file: string, text: string): ImportSite[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const sites: ImportSite[] = []
  const add = (node: ts.Node, spec: ts.Expression | undefined): void => {
    if (spec === undefined || !ts.isStringLiteralLike(spec) || !spec.text.startsWith('.')) return
    const target = normalize(join(dirname(file), spec.text)).split(sep).join('/').replace(/\.js$/, '.ts')
    sites.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, target, specifier: spec.text })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier)
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression)
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0])
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal as ts.Expression)
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return sites
}

export interface LayerReport {
  files: number
  imports: number
  offences: Offence[]
  /** files no row of the table covers */
  unplaced: string[]
}

/** Reads every file of `srcDir` and lists each import the table does not allow. */
export function checkLayers (srcDir: string, layers: Layer[]): LayerReport {
  const files = sourceFiles(srcDir)
  const offences: Offence[] = []
  const unplaced: string[] = []
  let imports = 0
  const name = (l: Layer): string => l.members.join(', ')
  for (const file of files) {
    const from = layerOf(layers, file)
    if (from === undefined) { unplaced.push(file); continue }
    for (const site of importsOf(file, readFileSync(join(srcDir, file), 'utf8'))) {
      if (site.target.startsWith('../')) continue // outside src/: not ours to place (none today)
      imports++
      const to = layerOf(layers, site.target)
      if (to === from) continue
      if (to !== undefined && from.mayImport.some((e) => to.members.includes(e) || covers(e, site.target))) continue
      offences.push({ ...site, from: name(from), to: to === undefined ? '(no layer)' : name(to) })
    }
  }
  return { files: files.length, imports, offences, unplaced }
}

/** A cycle among the rows' allowed edges, as the first member of each row along it; null when one-way. */
export function cycleOf (layers: Layer[]): string[] | null {
  const target = (e: string): Layer | undefined => layers.find((l) => l.members.includes(e)) ?? layerOf(layers, e)
  const state = new Map<Layer, 'open' | 'done'>()
  const path: Layer[] = []
  const dfs = (l: Layer): Layer[] | null => {
    state.set(l, 'open')
    path.push(l)
    for (const e of l.mayImport) {
      const t = target(e)
      if (t === undefined || t === l) continue
      if (state.get(t) === 'open') return [...path.slice(path.indexOf(t)), t]
      if (state.get(t) === undefined) {
        const c = dfs(t)
        if (c !== null) return c
      }
    }
    path.pop()
    state.set(l, 'done')
    return null
  }
  for (const l of layers) {
    if (state.get(l) === undefined) {
      const c = dfs(l)
      if (c !== null) return c.map((x) => x.members[0] as string)
    }
  }
  return null
}

export function formatOffence (o: Offence): string {
  return `src/${o.file}:${o.line}: ${o.from} may not import ${o.to} (${o.specifier})`
}
