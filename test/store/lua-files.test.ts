// The scripts' .lua files (src/store/lua-source.ts): the header is not sent, an include is the included
// file's text, each line of a script is traced to its file; and the values the Lua spells out that
// TypeScript also holds (the record format, the relay's group) are the same on both sides.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { luaScript, luaSource } from '../../src/store/lua-source.js'
import { DAILY_TAIL, LIMIT_TAIL, RECORD_FORMAT, RECORD_HEAD, RECORD_HEAD_KEPT } from '../../src/store/record-format.js'
import { AUTHORIZE_BODY, AUTHORIZE_DEFINITIONS, AUTHORIZE_LUA } from '../../src/store/lua.js'
import { GROUP, SETTLE_LUA } from '../../src/events/outbox.js'

const fileUrl = (dir: string, name: string): URL => pathToFileURL(join(dir, name))

t.test('a script is its file after the header, each include line replaced by the file it names', async (t) => {
  const dir = t.testdir({
    'main.lua': '--[[\n  KEYS[1] a key\n]]\n--- @include "includes/helper"\n\nreturn helper(KEYS[1])\n',
    includes: { 'helper.lua': '--[[\n  a helper\n]]\n\nlocal function helper (k) return k end\n' }
  })
  const source = luaSource(fileUrl(dir, 'main.lua'))
  t.equal(source.text, '\nlocal function helper (k) return k end\n\nreturn helper(KEYS[1])\n')
  t.same(source.lines.map((l) => `${l.file.slice(dir.length + 1)}:${l.line}`),
    ['includes/helper.lua:4', 'includes/helper.lua:5', 'main.lua:5', 'main.lua:6'])
})

t.test('a file without its header, without a final newline, or including itself is refused', async (t) => {
  const dir = t.testdir({
    'bare.lua': 'return 1\n',
    'unended.lua': '--[[\n  x\n]]\nreturn 1',
    'loop.lua': '--[[\n  x\n]]\n--- @include "loop"\n'
  })
  t.throws(() => luaScript(fileUrl(dir, 'bare.lua')), /starts with a --\[\[ \]\] comment/)
  t.throws(() => luaScript(fileUrl(dir, 'unended.lua')), /ends with a newline/)
  t.throws(() => luaScript(fileUrl(dir, 'loop.lua')), /include cycle/)
})

t.test('the authorize script is its definitions, then its body (the function library loads them apart)', async (t) => {
  t.equal(AUTHORIZE_DEFINITIONS + AUTHORIZE_BODY, AUTHORIZE_LUA)
  t.match(AUTHORIZE_BODY, /^\ncallStart\(\)\n/)
  t.notMatch(AUTHORIZE_LUA, /--\[\[|@include/, 'no header or include line reaches Redis')
})

t.test('records.lua spells out record-format.ts\'s values', async (t) => {
  const records = readFileSync(new URL('../../src/store/lua/includes/records.lua', import.meta.url), 'utf8')
  const at = (f: typeof RECORD_HEAD[number]): number => RECORD_HEAD.indexOf(f) + 2
  t.ok(records.includes(`\nlocal HEAD = {${RECORD_HEAD.map((f) => `'${f}'`).join(', ')}}\n`), 'HEAD is RECORD_HEAD')
  t.ok(records.includes(`\nlocal LIMITS_AT, DAILY_AT, DECIDED_AT, ON_DEADLINE_AT = ${at('limitEntries')}, ${at('controlEntries')}, ${at('decidedAtMs')}, ${at('answeredOnDeadline')}\n`))
  t.ok(records.includes(`if h[1] ~= ${RECORD_FORMAT} then`), 'a head is read as RECORD_FORMAT')
  t.ok(records.includes(`local h = {${RECORD_FORMAT}}`), 'and written as RECORD_FORMAT')
  t.ok(records.includes(`while #h > ${RECORD_HEAD_KEPT} and`), 'cut no shorter than RECORD_HEAD_KEPT')
  t.equal(records.split(`tag .. '${LIMIT_TAIL}' ..`).length - 1, 2, 'limit entries are keyed with LIMIT_TAIL')
  t.ok(records.includes(`string.sub(e[1], #tag + ${LIMIT_TAIL.length + 1})`), 'and read after it')
  t.equal(records.split(`tag .. '${DAILY_TAIL}' ..`).length - 1, 2, 'daily totals are keyed with DAILY_TAIL')
  t.ok(AUTHORIZE_BODY.includes(`local head = '[${RECORD_FORMAT},"'`), 'the authorize script writes RECORD_FORMAT')
})

t.test('the relay settles in GROUP', async (t) => {
  t.ok(SETTLE_LUA.includes(`redis.call('XACK', KEYS[1], '${GROUP}', unpack(ARGV, 2))`))
})
