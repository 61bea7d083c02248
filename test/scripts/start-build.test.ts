// `npm start` builds only what changed: once dist/ is built, the start's compile step finds the project up to
// date and compiles nothing (before, every start ran a whole `tsc`, 24 s on a busy machine). The README's
// command stays `npm start`.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url))

t.test('the start\'s compile step is incremental and finds a built tree up to date', async (t) => {
  const scripts = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts
  const compile = scripts.start?.split(' && ')[0] ?? ''
  t.equal(compile, 'tsc -b tsconfig.build.json', 'npm start compiles with tsc -b (only what changed)')
  t.equal(scripts.start, `${scripts.build ?? ''} && node dist/server.js`, 'npm start is npm run build, then the server from dist/')
  // build what is not built yet (a fresh clone builds everything once), then ask what a start would do
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'pipe' })
  const dry = execFileSync(process.execPath, [tsc, '-b', '--verbose', '--dry', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' })
  t.match(dry, /Project '.*tsconfig\.build\.json' is up to date/, 'a second start compiles nothing')
})

t.test('the build puts the Lua files beside the modules that read them: dist/ sends the same scripts as src/', async (t) => {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/copy-lua.ts'], { cwd: root, stdio: 'pipe' })
  const code = "const [a, b] = await Promise.all([import('./dist/store/lua.js'), import('./dist/settlement/lua.js')]); " +
    'process.stdout.write(JSON.stringify({ authorize: a.AUTHORIZE_LUA, posting: b.POSTING_LUA }))'
  const built = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' })) as Record<string, string>
  const { AUTHORIZE_LUA } = await import('../../src/store/lua.js')
  const { POSTING_LUA } = await import('../../src/settlement/lua.js')
  t.equal(built.authorize, AUTHORIZE_LUA)
  t.equal(built.posting, POSTING_LUA)
})
