// Lua kept in .lua files (src/store/lua/, src/settlement/lua/, src/events/lua/), read once, when the module
// that exports a script is loaded: from src/ under tsx, from dist/ after `npm run build`, which copies them
// there (scripts/copy-lua.ts). A file starts with a --[[ ]] comment that says what the script takes and gives
// back (each KEYS[i] and ARGV[i]); it is not sent. A line `--- @include "<path>"` (relative to the file,
// without .lua) stands for that file's text, its own includes put in: the shared helpers in includes/, as
// BullMQ keeps its commands. The rest of the file goes to Redis byte for byte, so what EVALSHA runs is what
// the files say (test/store/lua-digests.test.ts holds every text to its digest).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const HEADER = /^--\[\[[\s\S]*?\n\]\]\n/
const INCLUDE = /^--- @include "([^"]+)"$/

/** Where a line of an assembled script was written: the .lua file and its line (from 1). */
export interface LuaLine { file: string, line: number }

export interface LuaSource {
  /** the text sent to Redis */
  text: string
  /** lines[i] is where line i + 1 of text comes from (npm run lint:lua reports on the files' own lines) */
  lines: LuaLine[]
}

/** A .lua file with its includes put in. `including`: the files on the way to it (an include cycle is a programmer error). */
export function luaSource (url: URL, including: readonly string[] = []): LuaSource {
  const file = fileURLToPath(url)
  assert(!including.includes(file), `Lua include cycle: ${[...including, file].join(' -> ')}`)
  const raw = readFileSync(file, 'utf8')
  const header = HEADER.exec(raw)
  assert(header !== null, `${file}: a Lua file starts with a --[[ ]] comment on what it takes and gives back`)
  assert(raw.endsWith('\n'), `${file}: a Lua file ends with a newline`)
  const first = header[0].split('\n').length
  let text = ''
  const lines: LuaLine[] = []
  raw.slice(header[0].length, -1).split('\n').forEach((line, i) => {
    const include = INCLUDE.exec(line)
    if (include === null) {
      text += line + '\n'
      lines.push({ file, line: first + i })
      return
    }
    const part = luaSource(new URL(`${include[1] as string}.lua`, url), [...including, file])
    text += part.text
    lines.push(...part.lines)
  })
  return { text, lines }
}

/** The text of a script, as sent to Redis. */
export function luaScript (url: URL): string {
  return luaSource(url).text
}
