// Checks Dockerfile, .dockerignore and docker-compose.yml without a Docker engine: dockerfile-utils' validator
// (the builder's own syntax and flag checks), then the properties this service depends on (multi-stage build,
// production dependencies only, the simulators left out of the build, non-root, health check, ports, Redis
// persistence, the admin port kept on the host's loopback, a stop grace longer than GRACE_MS). When a compose CLI is installed (`docker compose` or
// `docker-compose`), its `config` check runs too; neither needs a daemon.
//   npm run check:docker
import { readFileSync, existsSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import ast from 'dockerfile-ast'
import utils from 'dockerfile-utils'
import { parse as parseYaml } from 'yaml'
import { buildFiles, imageBuildProblems } from './lib/image-build.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const problems: string[] = []
const notes: string[] = []
const fail = (what: string): void => { problems.push(what) }
const expect = (ok: boolean, what: string): void => { if (!ok) fail(what) }

// ---------------------------------------------------------------- Dockerfile
const dockerfileText = readFileSync(join(root, 'Dockerfile'), 'utf8')
for (const d of utils.validate(dockerfileText)) {
  fail(`Dockerfile:${d.range.start.line + 1}: ${typeof d.message === 'string' ? d.message : d.message.value}`)
}

interface Step { keyword: string, args: string[], raw: string, from: string | null, line: number }
interface Stage { image: string, name: string | null, steps: Step[] }

const df = ast.DockerfileParser.parse(dockerfileText)
const stages: Stage[] = []
for (const ins of df.getInstructions()) {
  const keyword = ins.getKeyword()
  const args = ins.getExpandedArguments().map((a) => a.getValue())
  const line = ins.getRange().start.line + 1
  if (keyword === 'FROM') {
    const asAt = args.findIndex((a) => a.toUpperCase() === 'AS')
    stages.push({ image: args[0] ?? '', name: asAt >= 0 ? (args[asAt + 1] ?? null) : null, steps: [] })
    continue
  }
  const stage = stages[stages.length - 1]
  if (stage === undefined) continue // ARG before the first FROM
  const from = keyword === 'COPY' ? ((ins as ast.Copy).getFromFlag()?.getValue() ?? null) : null
  stage.steps.push({ keyword, args, raw: ins.getArgumentsContent() ?? '', from, line })
}

const runtime = stages[stages.length - 1]
expect(stages.length >= 2, 'Dockerfile: not multi-stage (want a build stage and a runtime stage)')
if (runtime !== undefined) {
  const steps = (k: string): Step[] => runtime.steps.filter((s) => s.keyword === k)
  const last = (k: string): Step | undefined => steps(k).at(-1)
  expect(/^node:(20|22)(\.[\d.]+)?-slim$/.test(runtime.image), `Dockerfile: runtime image is ${runtime.image}, want node:22-slim or node:20-slim`)

  const build = stages.find((s) => s.name !== null && runtime.steps.some((st) => st.from === s.name && st.args.some((a) => a.endsWith('/dist'))))
  expect(build !== undefined, 'Dockerfile: the runtime stage copies no dist/ from a build stage')
  if (build !== undefined) {
    const runs = build.steps.filter((s) => s.keyword === 'RUN').map((s) => s.raw)
    expect(runs.some((r) => /\bnpm ci\b/.test(r)), `Dockerfile: build stage "${build.name ?? ''}" does not run npm ci`)
    expect(runs.some((r) => /\bnpm run build\b/.test(r)), `Dockerfile: build stage "${build.name ?? ''}" does not run npm run build`)
    // a script `npm run build` runs (the Lua copy step) must be in the stage when it runs
    const buildScript = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.build ?? ''
    const copied = build.steps.filter((s) => s.keyword === 'COPY' && s.from === null).flatMap((s) => s.args.slice(0, -1))
    for (const needed of buildScript.match(/\bscripts\/\S+\.ts\b/g) ?? []) {
      expect(copied.includes(needed), `Dockerfile: npm run build runs ${needed}, which build stage "${build.name ?? ''}" does not copy`)
    }
  }

  // node_modules: installed here with --omit=dev, or copied from a stage that did exactly that
  const ownInstall = steps('RUN').some((s) => /\bnpm ci\b.*--omit=dev/.test(s.raw))
  const depsCopy = steps('COPY').find((s) => s.args.some((a) => /node_modules\/?$/.test(a)))
  const depsStage = depsCopy?.from !== null && depsCopy !== undefined ? stages.find((s) => s.name === depsCopy.from) : undefined
  const copiedProd = depsStage?.steps.some((s) => s.keyword === 'RUN' && /\bnpm ci\b.*--omit=dev/.test(s.raw)) === true
  expect(ownInstall || copiedProd, 'Dockerfile: runtime node_modules is not a production-only install (npm ci --omit=dev)')

  const env = Object.fromEntries(steps('ENV').flatMap((s) => s.args).map((a) => {
    const i = a.indexOf('=')
    return [a.slice(0, i), a.slice(i + 1)]
  }))
  expect(env.NODE_ENV === 'production', 'Dockerfile: runtime stage does not set NODE_ENV=production')

  const user = last('USER')?.args[0]
  expect(user !== undefined && !/^(root|0)(:.*)?$/.test(user), `Dockerfile: runtime stage runs as ${user ?? 'root (no USER)'}`)

  const exposed = steps('EXPOSE').flatMap((s) => s.args).map((p) => p.replace(/\/tcp$/, ''))
  for (const p of ['8080', '8081']) expect(exposed.includes(p), `Dockerfile: EXPOSE lacks ${p}`)

  const hc = last('HEALTHCHECK')
  expect(hc !== undefined, 'Dockerfile: no HEALTHCHECK')
  if (hc !== undefined) {
    expect(hc.raw.includes('/health/live'), 'Dockerfile: HEALTHCHECK does not ask /health/live')
    expect(hc.raw.includes('process.env.PORT'), 'Dockerfile: HEALTHCHECK ignores PORT')
    expect(!/\bcurl\b|\bwget\b/.test(hc.raw), 'Dockerfile: HEALTHCHECK uses curl/wget, which node slim images lack')
  }

  const workdir = last('WORKDIR')?.args[0] ?? '/'
  const rulesCopy = steps('COPY').find((s) => s.from === null && s.args[0] === 'rules')
  const rulesDest = rulesCopy?.args.at(-1)
  const rulesAbs = rulesDest === undefined ? undefined : (rulesDest.startsWith('/') ? rulesDest : join(workdir, rulesDest))
  expect(rulesAbs?.replace(/\/$/, '') === '/app/rules', `Dockerfile: rules/ is not copied to /app/rules (got ${rulesAbs ?? 'no copy'})`)
  expect(steps('COPY').some((s) => s.from === null && s.args[0] === 'package.json'),
    'Dockerfile: runtime lacks package.json ("type": "module" is what makes dist/*.js ES modules)')

  const cmd = last('CMD')
  let cmdArgs: unknown = null
  try { cmdArgs = cmd === undefined ? null : JSON.parse(cmd.raw) } catch { /* shell form */ }
  expect(JSON.stringify(cmdArgs) === JSON.stringify(['node', 'dist/server.js']),
    `Dockerfile: CMD is ${cmd?.raw ?? 'missing'}, want the exec form ["node", "dist/server.js"] (node gets SIGTERM itself)`)
  expect(last('ENTRYPOINT') === undefined, 'Dockerfile: an ENTRYPOINT would wrap the CMD')

  // `extauth` on PATH: a link to the built command line, which must be built from a source that exists
  const link = steps('RUN').map((s) => /\bln -s(?:f)? (\/app\/dist\/\S+\.js) \/usr\/local\/bin\/extauth\b/.exec(s.raw)).find((m) => m !== null)
  expect(link !== undefined, 'Dockerfile: no `extauth` command on PATH (ln -s /app/dist/<cli>.js /usr/local/bin/extauth)')
  if (link !== undefined) {
    const target = link[1] as string
    const source = join(root, target.replace(/^\/app\/dist\//, 'src/').replace(/\.js$/, '.ts'))
    expect(existsSync(source), `Dockerfile: extauth links to ${target}, but ${source.slice(root.length)} does not exist to build it`)
    expect(existsSync(source) && readFileSync(source, 'utf8').startsWith('#!/usr/bin/env node'), `Dockerfile: ${target} is run directly, so its source needs a #!/usr/bin/env node first line`)
    expect(steps('RUN').some((s) => new RegExp(`chmod [0-7]*7[0-7]* ${target.replace(/[.]/g, '\\.')}`).test(s.raw) || new RegExp(`chmod \\+x ${target.replace(/[.]/g, '\\.')}`).test(s.raw)),
      `Dockerfile: ${target} is not made executable`)
  }

  // every local COPY source must exist and get past .dockerignore
  const ignore = existsSync(join(root, '.dockerignore'))
    ? readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))
    : []
  expect(ignore.length > 0, '.dockerignore: missing or empty')
  for (const p of ['node_modules', '.git', 'dist', 'src/sim']) expect(ignore.includes(p), `.dockerignore: does not exclude ${p}`)
  for (const st of stages.flatMap((s) => s.steps)) {
    if (st.keyword !== 'COPY' || st.from !== null) continue
    for (const src of st.args.slice(0, -1)) {
      expect(existsSync(join(root, src)), `Dockerfile:${st.line}: COPY source ${src} does not exist`)
      const excluded = ignore.some((pat) => pat === src || pat === `${src}/` || src.startsWith(`${pat.replace(/\/$/, '')}/`))
      expect(!excluded || ignore.includes(`!${src}`), `Dockerfile:${st.line}: COPY source ${src} is excluded by .dockerignore`)
    }
  }
}

// ---------------------------------------------------------------- what the build compiles into dist/
// The simulators run from sources (`npm run sim`); the image holds the service and the command line only.
const built = buildFiles(join(root, 'tsconfig.build.json'))
for (const p of imageBuildProblems(built)) fail(`tsconfig.build.json: ${p}`)
notes.push(`the image build compiles ${built.length} files of src/, none of src/sim/`)

// ---------------------------------------------------------------- docker-compose.yml
type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const composeText = readFileSync(join(root, 'docker-compose.yml'), 'utf8')
const compose = parseYaml(composeText) as unknown
const services = isObj(compose) && isObj(compose.services) ? compose.services : {}
const ext = isObj(services.extauth) ? services.extauth : null
const redis = isObj(services.redis) ? services.redis : null
expect(ext !== null, 'compose: no service extauth')
expect(redis !== null, 'compose: no service redis')

/** Compose durations: 1m30s, 15s, 500ms. */
function durationMs (v: unknown): number {
  if (typeof v !== 'string') return NaN
  let total = 0
  let rest = v
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001 }
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)(ms|us|h|m|s)/.exec(rest)
    if (m === null) return NaN
    total += Number(m[1]) * (unit[m[2] as string] as number)
    rest = rest.slice(m[0].length)
  }
  return total
}

const envOf = (svc: Obj): Record<string, string> => {
  const e = svc.environment
  if (Array.isArray(e)) {
    return Object.fromEntries(e.map((kv) => { const s = String(kv); const i = s.indexOf('='); return [s.slice(0, i), s.slice(i + 1)] }))
  }
  return isObj(e) ? Object.fromEntries(Object.entries(e).map(([k, v]) => [k, String(v)])) : {}
}

if (redis !== null) {
  expect(typeof redis.image === 'string' && /^redis:7([.-]|$)/.test(redis.image), `compose redis: image is ${String(redis.image)}, want redis:7`)
  const cmd = Array.isArray(redis.command) ? redis.command.map(String).join(' ') : String(redis.command ?? '')
  expect(/--appendonly yes\b/.test(cmd), 'compose redis: AOF is off (want --appendonly yes)')
  expect(/--appendfsync everysec\b/.test(cmd), 'compose redis: want --appendfsync everysec')
  const vols = Array.isArray(redis.volumes) ? redis.volumes.map(String) : []
  const dataVol = vols.find((v) => v.split(':')[1] === '/data')
  expect(dataVol !== undefined, 'compose redis: no volume on /data (the AOF would die with the container)')
  const named = dataVol?.split(':')[0]
  if (named !== undefined && !named.startsWith('.') && !named.startsWith('/')) {
    expect(isObj(compose) && isObj(compose.volumes) && named in compose.volumes, `compose: volume ${named} is not declared under volumes:`)
  }
  expect(isObj(redis.healthcheck), 'compose redis: no healthcheck')
  expect(typeof redis.restart === 'string' && redis.restart !== 'no', 'compose redis: no restart policy')
  expect(redis.ports === undefined, 'compose redis: Redis is published on the host; extauth reaches it over the compose network')
}

if (ext !== null) {
  const env = envOf(ext)
  expect(/^redis:\/\/redis(:\d+)?(\/|$)/.test(env.REDIS_URL ?? ''), `compose extauth: REDIS_URL is ${env.REDIS_URL ?? 'unset'}, want redis://redis:6379`)
  for (const v of ['EXTAUTH_CONSUMER_KEY', 'EXTAUTH_CLIENT_ID', 'EXTAUTH_BANK_ID', 'ADMIN_TOKEN']) {
    expect(new RegExp(`^\\$\\{${v}:\\?.+\\}$`).test(env[v] ?? ''), `compose extauth: ${v} should be \${${v}:?message} (required, no default)`)
  }
  const ports = Array.isArray(ext.ports) ? ext.ports.map(String) : []
  expect(ports.some((p) => /^(0\.0\.0\.0:)?8080:8080(\/tcp)?$/.test(p)), 'compose extauth: 8080 is not published')
  const admin = ports.filter((p) => /:8081(\/tcp)?$/.test(p))
  expect(admin.length === 1 && admin[0]?.startsWith('127.0.0.1:') === true, `compose extauth: the admin port must be published as 127.0.0.1:8081:8081 only (got ${admin.join(', ') || 'none'})`)
  const dep = isObj(ext.depends_on) ? ext.depends_on.redis : undefined
  expect(isObj(dep) && dep.condition === 'service_healthy', 'compose extauth: depends_on redis is not condition: service_healthy')
  expect(isObj(ext.healthcheck), 'compose extauth: no healthcheck')
  expect(typeof ext.restart === 'string' && ext.restart !== 'no', 'compose extauth: no restart policy')
  const graceMs = Number(env.GRACE_MS ?? '10000')
  const stopMs = durationMs(ext.stop_grace_period ?? '10s')
  expect(stopMs > graceMs, `compose extauth: stop_grace_period (${String(ext.stop_grace_period ?? '10s default')}) must exceed GRACE_MS (${graceMs} ms)`)
}

// ---------------------------------------------------------------- compose CLI, when installed
function composeCli (): string[] | null {
  const v2 = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' })
  if (v2.status === 0) return ['docker', 'compose']
  const v1 = spawnSync('docker-compose', ['version'], { encoding: 'utf8' })
  if (v1.status === 0) return ['docker-compose']
  return null
}
const cli = composeCli()
if (cli === null) {
  notes.push('no compose CLI (docker compose / docker-compose): its `config` check was skipped')
} else {
  const [bin, ...pre] = cli as [string, ...string[]]
  const base = { ...process.env, EXTAUTH_CONSUMER_KEY: 'check', EXTAUTH_CLIENT_ID: 'check', EXTAUTH_BANK_ID: '1234', ADMIN_TOKEN: 'check' }
  const ok = spawnSync(bin, [...pre, '-f', join(root, 'docker-compose.yml'), 'config', '-q'], { encoding: 'utf8', env: base })
  expect(ok.status === 0, `${cli.join(' ')} config: ${(ok.stderr || ok.stdout).trim()}`)
  // without the required secrets, compose must refuse to start
  const { ADMIN_TOKEN: _t, ...missing } = base
  const refused = spawnSync(bin, [...pre, '-f', join(root, 'docker-compose.yml'), 'config', '-q'], { encoding: 'utf8', env: missing })
  expect(refused.status !== 0, `${cli.join(' ')} config: accepted the file without ADMIN_TOKEN`)
  notes.push(`${cli.join(' ')} config: ${ok.status === 0 ? 'valid' : 'INVALID'}; refuses to run without a required secret: ${refused.status !== 0 ? 'yes' : 'NO'}`)
}

for (const n of notes) process.stdout.write(`note: ${n}\n`)
if (problems.length > 0) {
  for (const p of problems) process.stdout.write(`FAIL ${p}\n`)
  process.stdout.write(`check:docker: ${problems.length} problem(s)\n`)
  process.exit(1)
}
process.stdout.write(`check:docker: Dockerfile (${stages.length} stages), .dockerignore and docker-compose.yml OK\n`)
