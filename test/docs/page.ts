// Reading a documentation page as a reader does: its fenced code blocks under their headings, and the shell
// commands in them split into words the way a shell splits them (shell-quote).
import { readFileSync } from 'node:fs'
import { parse } from 'shell-quote'

export interface CodeBlock {
  lang: string
  /** the text of the nearest heading above the block */
  heading: string
  body: string
}

/** `path` from the repository's root */
export function readPage (path: string): string {
  return readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
}

export function codeBlocks (markdown: string): CodeBlock[] {
  const out: CodeBlock[] = []
  let heading = ''
  let open: { fence: string, lang: string, lines: string[] } | null = null
  for (const line of markdown.split('\n')) {
    if (open !== null) {
      if (line.trim() === open.fence) {
        out.push({ lang: open.lang, heading, body: open.lines.join('\n') })
        open = null
      } else {
        open.lines.push(line)
      }
      continue
    }
    const fence = /^(`{3,}|~{3,})\s*(\S*)/.exec(line)
    if (fence !== null) {
      open = { fence: fence[1] as string, lang: fence[2] as string, lines: [] }
      continue
    }
    const h = /^#{1,6}\s+(.*)$/.exec(line)
    if (h !== null) heading = h[1] as string
  }
  return out
}

export interface ShellLine {
  /** the command's words; empty for a line that is only a comment */
  words: string[]
  /** the comment at the end of the line, without its `#` */
  comment: string | null
  /** an operator the line ends with (`&`) */
  operator: string | null
}

/** A shell script's commands, one a line once backslash-newlines are joined as the shell joins them. */
export function shellLines (script: string): ShellLine[] {
  return script.replace(/\\\n/g, '').split('\n').filter((l) => l.trim() !== '').map((line) => {
    const words: string[] = []
    let comment: string | null = null
    let operator: string | null = null
    for (const token of parse(line)) {
      if (typeof token === 'string') words.push(token)
      else if ('comment' in token) comment = token.comment
      else if ('op' in token) operator = token.op
    }
    return { words, comment, operator }
  })
}

/** The variables a script's `export A=1 B=2` lines set, in order. */
export function exportedVariables (script: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const { words } of shellLines(script)) {
    if (words[0] !== 'export') continue
    for (const w of words.slice(1)) {
      const eq = w.indexOf('=')
      if (eq > 0) env[w.slice(0, eq)] = w.slice(eq + 1)
    }
  }
  return env
}

export interface CurlCall {
  method: string
  url: URL
  headers: Record<string, string>
  body?: string
  /** the JSON of the `# {...}` comment lines right after the call: what its answer holds */
  expected: unknown[]
}

/** The curl calls of a script (`curl -s [-X M] host:port/path [-H 'k: v']... [-d 'body']`). */
export function curlCalls (script: string): CurlCall[] {
  const out: CurlCall[] = []
  for (const { words, comment } of shellLines(script)) {
    if (words[0] === 'curl') {
      const call: CurlCall = { method: 'GET', url: new URL('http://invalid'), headers: {}, expected: [] }
      for (let i = 1; i < words.length; i++) {
        const w = words[i] as string
        if (w === '-s') continue
        if (w === '-X') call.method = words[++i] as string
        else if (w === '-H') {
          const h = words[++i] as string
          const colon = h.indexOf(':')
          call.headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim()
        } else if (w === '-d') {
          call.body = words[++i] as string
          if (call.method === 'GET') call.method = 'POST'
        } else if (w.startsWith('-')) throw new Error(`curl option ${w} is not read here`)
        else call.url = new URL(/^https?:\/\//.test(w) ? w : `http://${w}`)
      }
      out.push(call)
    } else if (words.length === 0 && comment !== null && comment.trim().startsWith('{')) {
      const last = out[out.length - 1]
      if (last === undefined) throw new Error(`an answer before any call: ${comment}`)
      last.expected.push(JSON.parse(comment))
    }
  }
  return out
}
