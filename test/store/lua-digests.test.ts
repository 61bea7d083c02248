// The Lua texts that reach Redis, held to their SHA-1 digests in test/fixtures/lua-digests.json: a change to
// how the scripts are kept or put together (files, includes, the loader) leaves every text as it was, and a
// change to a script shows here as the one line it changes. The fixture changes only on purpose, in the same
// commit as the script's change, written again with
//   npm run -s lua:digests > test/fixtures/lua-digests.json
import t from 'tap'
import { readFileSync } from 'node:fs'
import { LUA_TEXTS, luaDigests } from '../../scripts/lib/lua-texts.js'

const fixture = JSON.parse(readFileSync(new URL('../fixtures/lua-digests.json', import.meta.url), 'utf8')) as Record<string, string>

t.test('every text that reaches Redis has the digest of the fixture', async (t) => {
  t.same(luaDigests(), fixture)
})

t.test('the texts are Lua, not empty, and no two names hold one script by mistake', async (t) => {
  for (const [name, text] of Object.entries(LUA_TEXTS)) t.ok(/redis\.(call|register_function)\(/.test(text), `${name} calls Redis`)
  // the lease's release and the lifecycle lock's are the same compare-and-delete on purpose
  const byDigest = new Map<string, string[]>()
  for (const [name, digest] of Object.entries(luaDigests())) byDigest.set(digest, [...(byDigest.get(digest) ?? []), name])
  t.same([...byDigest.values()].filter((names) => names.length > 1), [['events/UNLEASE_LUA', 'store/UNLOCK_LIFECYCLE_LUA']])
})
