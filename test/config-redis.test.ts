// The Redis settings and the public listener's timeouts (docs/operations/configuration.md): one way to reach
// Redis or none; a setting that would be ignored, or a combination that makes no sense, is refused naming a
// variable; the embedded store only when no Redis setting at all is given; and the real server stopping with
// one line, or going to Sentinel (not to memory) when Sentinel is configured.
import { spawn } from 'node:child_process'
import t from 'tap'
import { request } from 'undici'
import { ConfigError, loadConfig } from '../src/config.js'
import { freePort, privateRedis } from './helpers/redis.js'

const REQUIRED = {
  EXTAUTH_CONSUMER_KEY: 'consumer-key-secret-1',
  EXTAUTH_CLIENT_ID: 'client-1',
  EXTAUTH_BANK_ID: '1234'
}

function refusal (env: Record<string, string>): ConfigError | null {
  try {
    loadConfig({ ...REQUIRED, ...env })
    return null
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
}

const SENTINELS = '10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379'

t.test('Redis settings that cannot be used, or do not go together, are refused by name', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ REDIS_SENTINELS: SENTINELS }, 'REDIS_SENTINEL_NAME'],
    [{ REDIS_SENTINEL_NAME: 'main' }, 'REDIS_SENTINEL_NAME'],
    [{ REDIS_SENTINELS: SENTINELS, REDIS_SENTINEL_NAME: 'main', REDIS_URL: 'redis://10.0.0.9:6379' }, 'REDIS_SENTINELS'],
    [{ REDIS_SENTINELS: SENTINELS, REDIS_SENTINEL_NAME: 'main', REDIS_CLUSTER_NODES: '10.0.0.9:7000' }, 'REDIS_SENTINELS'],
    [{ REDIS_SENTINELS: 'sentinel-without-port', REDIS_SENTINEL_NAME: 'main' }, 'REDIS_SENTINELS'],
    [{ REDIS_SENTINELS: '10.0.0.1:99999', REDIS_SENTINEL_NAME: 'main' }, 'REDIS_SENTINELS'],
    [{ REDIS_SENTINELS: SENTINELS, REDIS_SENTINEL_NAME: 'has space' }, 'REDIS_SENTINEL_NAME'],
    [{ REDIS_WAIT_REPLICAS: '1' }, 'REDIS_WAIT_REPLICAS'],
    [{ REDIS_WAIT_REPLICAS: '0' }, 'REDIS_WAIT_REPLICAS'],
    [{ REDIS_WAIT_REPLICAS: '1', REDIS_CLUSTER_NODES: '10.0.0.9:7000' }, 'REDIS_WAIT_REPLICAS'],
    [{ REDIS_WAIT_REPLICAS: '-1', REDIS_URL: 'redis://10.0.0.9:6379' }, 'REDIS_WAIT_REPLICAS'],
    [{ REDIS_WAIT_REPLICAS: 'two', REDIS_URL: 'redis://10.0.0.9:6379' }, 'REDIS_WAIT_REPLICAS'],
    [{ REDIS_WAIT_REPLICAS: '17', REDIS_URL: 'redis://10.0.0.9:6379' }, 'REDIS_WAIT_REPLICAS'],
    [{ REDIS_KEY_PREFIX: 'program-a:' }, 'REDIS_KEY_PREFIX'],
    [{ REDIS_URL: 'redis://' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://10.0.0.9:99999' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://10.0.0.9:6379/zero' }, 'REDIS_URL'],
    [{ REDIS_URL: '10.0.0.9:6379' }, 'REDIS_URL'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL']
  ]
  for (const [env, variable] of cases) {
    const err = refusal(env)
    t.equal(err?.variable, variable, `${JSON.stringify(env)} refused, naming ${variable}`)
    t.notMatch(err?.message ?? '', /\n/, 'in one line')
  }
})

t.test('accepted Redis settings', async (t) => {
  const s = loadConfig({ ...REQUIRED, REDIS_SENTINELS: SENTINELS, REDIS_SENTINEL_NAME: 'main', REDIS_WAIT_REPLICAS: '1', REDIS_KEY_PREFIX: 'p:' })
  t.same(s.redisSentinels, [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }, { host: '10.0.0.3', port: 26379 }])
  t.equal(s.redisSentinelName, 'main')
  t.equal(s.redisWaitReplicas, 1)
  t.equal(s.redisUrl, '')
  t.equal(loadConfig({ ...REQUIRED, REDIS_URL: 'redis://10.0.0.9:6379', REDIS_WAIT_REPLICAS: '2' }).redisWaitReplicas, 2, 'WAIT with a plain URL')
  t.equal(loadConfig({ ...REQUIRED, REDIS_URL: 'rediss://user:pw@redis.internal:6380/3' }).redisUrl, 'rediss://user:pw@redis.internal:6380/3')
  const none = loadConfig({ ...REQUIRED, REDIS_URL: '', REDIS_KEY_PREFIX: '  ' })
  t.match(none, { redisUrl: '', redisClusterNodes: undefined, redisSentinels: undefined, redisWaitReplicas: 0 }, 'set but empty counts as not set: the embedded store')
})

t.test('public listener timeouts: defaults inside the 2000 ms budget, validated', async (t) => {
  const c = loadConfig({ ...REQUIRED })
  t.match(c, { httpHeadersTimeoutMs: 1000, httpRequestTimeoutMs: 1500, httpKeepAliveTimeoutMs: 5000 })
  t.ok(c.httpRequestTimeoutMs < 2000, 'a request that has not arrived by then cannot be answered in time anyway')
  const cases: Array<[Record<string, string>, string]> = [
    [{ HTTP_HEADERS_TIMEOUT_MS: '2001' }, 'HTTP_HEADERS_TIMEOUT_MS'],
    [{ HTTP_HEADERS_TIMEOUT_MS: '50' }, 'HTTP_HEADERS_TIMEOUT_MS'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '60000' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_REQUEST_TIMEOUT_MS: 'soon' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_HEADERS_TIMEOUT_MS: '1200', HTTP_REQUEST_TIMEOUT_MS: '800' }, 'HTTP_HEADERS_TIMEOUT_MS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS']
  ]
  for (const [env, variable] of cases) t.equal(refusal(env)?.variable, variable, `${JSON.stringify(env)} refused`)
  t.match(loadConfig({ ...REQUIRED, HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '900', HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000' }),
    { httpHeadersTimeoutMs: 500, httpRequestTimeoutMs: 900, httpKeepAliveTimeoutMs: 65000 })
})

interface Started { code: number | null, stdout: string, stderr: string, ready: number | null, reasons: string[] }

/** Children still running when the file ends: stopped at teardown. */
const running = new Set<ReturnType<typeof spawn>>()
t.teardown(() => { for (const child of running) child.kill('SIGKILL') })

/**
 * Runs the real server; when it listens, reads /health/ready (status and reasons), then stops it. No clock decides:
 * a server that never listens fails on tap's timeout for the file.
 */
async function runServer (env: Record<string, string>): Promise<Started> {
  const [port, adminPort] = [await freePort(), await freePort()]
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ADMIN_PORT: String(adminPort), RULES_WATCH: 'false', RULES_DIR: 'test/fixtures/rules-empty', ...REQUIRED, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  running.add(child)
  let stdout = ''
  let stderr = ''
  let ready: number | null = null
  let reasons: string[] = []
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString()
    if (ready === null && (stdout.includes('"extauth ready"') || stdout.includes('"extauth listening'))) {
      ready = 0
      request(`http://127.0.0.1:${port}/health/ready`).then(async (res) => {
        ready = res.statusCode
        const body = await res.body.json() as { reasons?: string[] }
        reasons = body.reasons ?? []
      }, () => { ready = -1 }).finally(() => child.kill('SIGTERM'))
    }
  })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  running.delete(child)
  return { code, stdout, stderr, ready, reasons }
}

t.test('the real server: one line for a Sentinel setting it cannot use; Sentinel, not memory, when it can', async (t) => {
  const bad = await runServer({ REDIS_SENTINELS: '127.0.0.1:1' })
  const lines = bad.stderr.split('\n').filter((l) => l !== '')
  t.not(bad.code, 0, 'REDIS_SENTINELS without a name: non-zero exit')
  t.equal(lines.length, 1, 'exactly one stderr line', { stderr: bad.stderr })
  t.match(lines[0], /REDIS_SENTINEL_NAME/, 'naming the missing variable')

  // Sentinels that do not answer: the service starts on Redis, not ready, and never on the embedded store
  const sentinelPort = await freePort()
  const s = await runServer({ REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`, REDIS_SENTINEL_NAME: 'main' })
  t.equal(s.ready, 503, '/health/ready is 503 while no Sentinel answers')
  t.ok(s.reasons.includes('store_unreachable'), 'because the store does not answer', { reasons: s.reasons })
  t.notMatch(s.stdout, /embedded in-memory store/, 'no fall-back to the embedded store')
  t.match(s.stdout, /"store":"redis"/, 'the store is Redis')
})

t.test('REDIS_WAIT_REPLICAS above the replicas connected: a warning at start, not one per request', async (t) => {
  const redis = await privateRedis(t)
  const r = await runServer({ REDIS_URL: redis.url, REDIS_WAIT_REPLICAS: '1', REDIS_KEY_PREFIX: 'wait-warn:' })
  // ready as far as the store and the rules go; 'overloaded' is the machine's load at start, not this setting's
  t.ok(r.ready === 200 || r.ready === 503, 'starts and answers /health/ready', { ready: r.ready })
  t.same(r.reasons.filter((reason) => reason !== 'overloaded'), [], 'and is ready (declines are still answered)')
  const warning = r.stdout.split('\n').filter((l) => l.includes('fewer replicas connected than REDIS_WAIT_REPLICAS'))
  t.equal(warning.length, 1, 'one warning line')
  t.match(JSON.parse(warning[0] ?? '{}'), { connected: 0, wanted: 1 }, 'with the figures')
})
