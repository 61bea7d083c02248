// Prints the SHA-1 of every Lua text the service sends to Redis (scripts/lib/lua-texts.ts), as the JSON of
// test/fixtures/lua-digests.json. A change to a script's text changes its line; the fixture is written again
// only for a change meant to reach Redis:
//   npm run lua:digests > test/fixtures/lua-digests.json
import { luaDigests } from './lib/lua-texts.js'

process.stdout.write(JSON.stringify(luaDigests(), null, 2) + '\n')
