// Configuration from the environment (README "Configuration"): required variables, refused values naming the
// variable, the defaults; and the real server refusing to start on a bad value with one stderr line.
import { spawn } from 'node:child_process'
import t from 'tap'
import { ConfigError, loadConfig } from '../src/config.js'
import { freePort } from './helpers/redis.js'
import { keysFile, keysFileText } from './helpers/admin-keys.js'
import { makeCerts } from './helpers/certs.js'

const REQUIRED = {
  EXTAUTH_CONSUMER_KEY: 'consumer-key-secret-1',
  EXTAUTH_CLIENT_ID: 'client-1',
  EXTAUTH_BANK_ID: '1234'
}

/** The ConfigError loadConfig throws for `env` (the required variables added unless overridden). */
function refusal (env: Record<string, string | undefined>): ConfigError | null {
  const merged: Record<string, string | undefined> = { ...REQUIRED, ...env }
  const full = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv
  try {
    loadConfig(full)
    return null
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
}

t.test('each required variable, missing or empty, is refused by name', async t => {
  for (const name of Object.keys(REQUIRED)) {
    for (const [label, value] of [['missing', undefined], ['empty', ''], ['blank', '   ']] as Array<[string, string | undefined]>) {
      if (name === 'EXTAUTH_BANK_ID' && label === 'blank') continue
      const err = refusal({ [name]: value })
      t.ok(err instanceof ConfigError, `${name} ${label}: ConfigError`)
      t.equal(err?.variable, name, `${name} ${label}: names the variable`)
      t.match(err?.message, new RegExp(`^${name}: `), `${name} ${label}: the message starts with it`)
    }
  }
  t.equal(refusal({ EXTAUTH_BANK_ID: '   ' })?.variable, 'EXTAUTH_BANK_ID', 'a blank bank id is refused')
  t.equal(refusal({})?.variable, undefined, 'all three present: accepted')
})

t.test('DECISION_DEADLINE_MS must be a whole number below the platform\'s 2000 ms', async t => {
  for (const bad of ['2000', '2500', 'abc', '', '-1', '1200.5', '1e3', '0x4b0', '12 00', '0', '49']) {
    const err = refusal({ DECISION_DEADLINE_MS: bad })
    t.equal(err?.variable, 'DECISION_DEADLINE_MS', `"${bad}" refused`)
  }
  for (const good of ['1999', '1200', '300', '50']) {
    t.equal(refusal({ DECISION_DEADLINE_MS: good }), null, `"${good}" accepted`)
    t.equal(loadConfig({ ...REQUIRED, DECISION_DEADLINE_MS: good }).deadlineMs, Number(good))
  }
})

t.test('ALLOWED_SOURCE_IPS: a malformed address or CIDR is refused', async t => {
  for (const bad of ['10.0.0.0/33', 'not-an-ip', '10.0.0.1,bogus', '256.1.1.1', '::1/129', '10.0.0.0/', '10.0.0.0/8/8']) {
    t.equal(refusal({ ALLOWED_SOURCE_IPS: bad })?.variable, 'ALLOWED_SOURCE_IPS', `"${bad}" refused`)
  }
  // IPv4 in other than four decimal parts is what inet_aton reads, not what an operator means:
  // "10.1.5/24" is 10.1.0.5/24, "010.1.2.3" is 8.1.2.3 (octal), "167772161" is 10.0.0.1
  for (const bad of ['10.1.5/24', '10.0.0/8', '010.1.2.3', '0x0a.1.2.3/32', '167772161', '10.1/16']) {
    t.equal(refusal({ ALLOWED_SOURCE_IPS: bad })?.variable, 'ALLOWED_SOURCE_IPS', `"${bad}" refused (not four decimal parts)`)
  }
  const c = loadConfig({ ...REQUIRED, ALLOWED_SOURCE_IPS: '10.0.0.0/8, 192.168.1.7,::1, 2001:db8::/32' })
  t.same(c.allowedSourceIps.map(([addr, bits]) => `${addr.toString()}/${bits}`), ['10.0.0.0/8', '192.168.1.7/32', '::1/128', '2001:db8::/32'],
    'addresses become /32 or /128, CIDRs stay')
})

t.test('TIMEZONE must be an IANA zone', async t => {
  for (const bad of ['Mars/Olympus', 'Asia/Bombay2', 'UTC+5']) {
    t.equal(refusal({ TIMEZONE: bad })?.variable, 'TIMEZONE', `"${bad}" refused`)
  }
  t.equal(loadConfig({ ...REQUIRED, TIMEZONE: 'Asia/Kolkata' }).timezone, 'Asia/Kolkata')
})

t.test('EXTAUTH_BANK_ID must be 4 digits', async t => {
  for (const bad of ['123', '12345', '12a4', 'abcd', ' 1234']) {
    t.equal(refusal({ EXTAUTH_BANK_ID: bad })?.variable, 'EXTAUTH_BANK_ID', `"${bad}" refused`)
  }
  t.equal(loadConfig({ ...REQUIRED, EXTAUTH_BANK_ID: '0042' }).bankId, '0042', 'leading zeros kept')
})

t.test('other refused values name their variable', async t => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, 'REDIS_URL'],
    [{ REDIS_CLUSTER_NODES: 'host-without-port' }, 'REDIS_CLUSTER_NODES'],
    [{ DEFAULT_CURRENCY: '35' }, 'DEFAULT_CURRENCY'],
    [{ DEFAULT_CURRENCY: 'INR' }, 'DEFAULT_CURRENCY'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ ADMIN_PORT: '70000' }, 'ADMIN_PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ TRUST_PROXY: 'maybe' }, 'TRUST_PROXY'],
    [{ REDIS_KEY_PREFIX: 'a{b}' }, 'REDIS_KEY_PREFIX'],
    [{ PUBLIC_URL: 'auth.example.test:8080' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: '/api' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'https://auth.example.test/?a=1' }, 'PUBLIC_URL'],
    [{ DOCS_BASE_URL: 'ftp://docs.example.test/' }, 'DOCS_BASE_URL'],
    [{ DOCS_BASE_URL: 'docs/' }, 'DOCS_BASE_URL']
  ]
  for (const [env, variable] of cases) {
    t.equal(refusal(env)?.variable, variable, `${JSON.stringify(env)} refused, naming ${variable}`)
  }
})

t.test('PUBLIC_URL and DOCS_BASE_URL: the API reference\'s servers and links', async t => {
  const config = (env: Record<string, string>) => loadConfig({ ...REQUIRED, ...env })
  t.equal(config({}).publicUrl, 'http://127.0.0.1:8080', 'every address: reached on loopback')
  t.equal(config({ HOST: '10.1.2.3', PORT: '9080' }).publicUrl, 'http://10.1.2.3:9080')
  t.equal(config({ HOST: '::1' }).publicUrl, 'http://[::1]:8080')
  t.equal(config({ PUBLIC_URL: 'https://auth.example.test/extauth/' }).publicUrl, 'https://auth.example.test/extauth')
  t.equal(config({}).docsBaseUrl, '/admin/docs/files/', 'the admin listener\'s own copy')
  t.equal(config({ DOCS_BASE_URL: 'https://docs.example.test/extauth/v1' }).docsBaseUrl, 'https://docs.example.test/extauth/v1/')
})

t.test('a refusal does not repeat a secret it was given', async t => {
  const err = refusal({ REDIS_URL: 'http://user:hunter2-secret@127.0.0.1:6379' })
  t.equal(err?.variable, 'REDIS_URL')
  t.notMatch(err?.message, /hunter2/, 'the URL with its password is not in the message')
  const missing = refusal({ EXTAUTH_CLIENT_ID: undefined })
  t.notMatch(missing?.message, /consumer-key-secret-1/, 'nor is the consumer key')
})

t.test('the defaults of README "Configuration"', async t => {
  const c = loadConfig({ ...REQUIRED })
  t.match(c, {
    consumerKey: REQUIRED.EXTAUTH_CONSUMER_KEY,
    clientId: REQUIRED.EXTAUTH_CLIENT_ID,
    bankId: REQUIRED.EXTAUTH_BANK_ID,
    host: '0.0.0.0',
    port: 8080,
    adminHost: '127.0.0.1',
    adminPort: 8081,
    adminToken: '',
    adminKeysFile: '',
    trustProxy: false,
    deadlineMs: 1200,
    timezone: 'UTC',
    defaultCurrency: '356',
    rulesDir: './rules',
    redisUrl: '',
    redisClusterNodes: undefined,
    logLevel: 'info'
  })
  t.same(c.entityIds, [], 'EXTAUTH_ENTITY_IDS: empty = any')
  t.same(c.allowedSourceIps, [], 'ALLOWED_SOURCE_IPS: empty = any')
  t.same(loadConfig({ ...REQUIRED, EXTAUTH_ENTITY_IDS: ' 0001, 0002 ,' }).entityIds, ['0001', '0002'], 'a comma list, trimmed')
  t.equal(loadConfig({ ...REQUIRED, TRUST_PROXY: 'true' }).trustProxy, true)
  t.equal(loadConfig({ ...REQUIRED, TRUST_PROXY: 'false' }).trustProxy, false)
  t.same(loadConfig({ ...REQUIRED, REDIS_CLUSTER_NODES: 'a:7000, b:7001' }).redisClusterNodes, [{ host: 'a', port: 7000 }, { host: 'b', port: 7001 }])
})

interface Exit { code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }

/** Children still running when the file ends (a server that wrongly started): stopped at teardown. */
const running = new Set<ReturnType<typeof spawn>>()
t.teardown(() => { for (const child of running) child.kill('SIGKILL') })

/**
 * Runs the real server with `env` (and no other variables but PATH) until it exits. No clock decides: a server
 * that wrongly starts says so on stdout ("extauth listening"/"extauth ready") and is stopped then, so the test
 * reads its signal; one that hangs without a word fails on tap's timeout for the file.
 */
async function runServer (env: Record<string, string>): Promise<Exit> {
  const [port, adminPort] = [await freePort(), await freePort()]
  return await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: new URL('..', import.meta.url).pathname,
      // listen on loopback and free ports, should the server wrongly start
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ADMIN_PORT: String(adminPort), RULES_WATCH: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
      if (/"extauth (listening|ready)/.test(stdout)) child.kill('SIGKILL')
    })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      running.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

t.test('the server refuses to start on a bad value: non-zero exit, one stderr line naming it', async t => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['DECISION_DEADLINE_MS=2500', { ...REQUIRED, DECISION_DEADLINE_MS: '2500' }, 'DECISION_DEADLINE_MS'],
    ['EXTAUTH_BANK_ID missing', { EXTAUTH_CONSUMER_KEY: REQUIRED.EXTAUTH_CONSUMER_KEY, EXTAUTH_CLIENT_ID: REQUIRED.EXTAUTH_CLIENT_ID }, 'EXTAUTH_BANK_ID'],
    ['ALLOWED_SOURCE_IPS malformed', { ...REQUIRED, ALLOWED_SOURCE_IPS: '10.0.0.0/40' }, 'ALLOWED_SOURCE_IPS']
  ]
  await Promise.all(cases.map(async ([label, env, variable]) => {
    const r = await runServer(env)
    t.equal(r.signal, null, `${label}: exited by itself`)
    t.not(r.code, 0, `${label}: non-zero exit code`)
    t.ok(r.code !== null && r.code > 0, `${label}: exit code ${String(r.code)}`)
    const lines = r.stderr.split('\n').filter(l => l !== '')
    t.equal(lines.length, 1, `${label}: exactly one stderr line`, { stderr: r.stderr })
    t.match(lines[0], new RegExp(`\\b${variable}\\b`), `${label}: the line names ${variable}`)
    t.notMatch(r.stderr, new RegExp(REQUIRED.EXTAUTH_CONSUMER_KEY), `${label}: no secret in it`)
    t.equal(r.stdout, '', `${label}: nothing on stdout`)
  }))
})

t.test('every bad variable is named at once, in the error and on stderr, one line each', async t => {
  const err = refusal({ EXTAUTH_BANK_ID: undefined, DECISION_DEADLINE_MS: '2500', TIMEZONE: 'Mars/Olympus', REDIS_URL: 'http://h:1', REDIS_KEY_PREFIX: 'a{b}' })
  t.ok(err instanceof ConfigError)
  t.same(err?.problems.map(p => p.variable).sort(), ['DECISION_DEADLINE_MS', 'EXTAUTH_BANK_ID', 'REDIS_KEY_PREFIX', 'REDIS_URL', 'TIMEZONE'])
  t.equal(err?.message.split('\n').length, 5, 'one line each')
  t.equal(err?.variable, err?.problems[0]?.variable, 'variable is the first of them')

  const r = await runServer({ EXTAUTH_CONSUMER_KEY: REQUIRED.EXTAUTH_CONSUMER_KEY, EXTAUTH_CLIENT_ID: REQUIRED.EXTAUTH_CLIENT_ID, DECISION_DEADLINE_MS: '2500', TIMEZONE: 'Mars/Olympus' })
  t.equal(r.code, 1)
  const lines = r.stderr.split('\n').filter(l => l !== '')
  t.same(lines.map(l => /^extauth: configuration error: ([A-Z_]+): /.exec(l)?.[1]).sort(), ['DECISION_DEADLINE_MS', 'EXTAUTH_BANK_ID', 'TIMEZONE'], r.stderr)
  t.notMatch(r.stderr, new RegExp(REQUIRED.EXTAUTH_CONSUMER_KEY), 'no secret in it')
})

t.test('ADMIN_KEYS_FILE: read and checked at start; a bad file names the variable, the file and the entry', async t => {
  const file = keysFile(t, [{ id: 'reader', key: 'reader-key-1234567890', scopes: ['read'] }])
  const c = loadConfig({ ...REQUIRED, ADMIN_KEYS_FILE: file.path })
  t.equal(c.adminKeys.size, 1, 'the file\'s key, no ADMIN_TOKEN')
  t.equal(c.adminKeys.find('reader-key-1234567890')?.id, 'reader')
  t.equal(loadConfig({ ...REQUIRED, ADMIN_TOKEN: 't0ken-value-1', ADMIN_KEYS_FILE: file.path }).adminKeys.size, 2, 'with ADMIN_TOKEN: both')
  t.equal(loadConfig({ ...REQUIRED }).adminKeys.size, 0, 'neither: no key (the admin listener does not start)')
  const missing = refusal({ ADMIN_KEYS_FILE: `${file.path}.nope` })
  t.match(missing?.problems, [{ variable: 'ADMIN_KEYS_FILE', message: /\.nope: cannot be read \(ENOENT\)/ }])
  file.write(JSON.stringify([{ id: 'reader', sha256: 'ab', scopes: ['read'] }]))
  t.match(refusal({ ADMIN_KEYS_FILE: file.path })?.problems, [{ variable: 'ADMIN_KEYS_FILE', message: /entry 0 \(reader\): sha256 must be 64 hex digits/ }])
  file.write(keysFileText([{ id: 'same', key: 't0ken-value-1', scopes: ['read'] }]))
  t.match(refusal({ ADMIN_TOKEN: 't0ken-value-1', ADMIN_KEYS_FILE: file.path })?.problems, [{ variable: 'ADMIN_KEYS_FILE', message: /is ADMIN_TOKEN itself/ }])
  t.notMatch(refusal({ ADMIN_TOKEN: 't0ken-value-1', ADMIN_KEYS_FILE: file.path })?.message, /t0ken-value-1/, 'the key is not in the message')

  file.write('[1,')
  const r = await runServer({ ...REQUIRED, ADMIN_KEYS_FILE: file.path })
  t.equal(r.code, 1, 'the server does not start')
  t.match(r.stderr, /^extauth: configuration error: ADMIN_KEYS_FILE: .*is not JSON/)
  t.equal(r.stderr.split('\n').filter(l => l !== '').length, 1, 'one line')
})

t.test('AUDIT_RETENTION_DAYS: 90 days by default, 1 to 3650', async t => {
  t.equal(loadConfig({ ...REQUIRED }).auditRetentionMs, 90 * 24 * 3600_000)
  t.equal(loadConfig({ ...REQUIRED, AUDIT_RETENTION_DAYS: '400' }).auditRetentionMs, 400 * 24 * 3600_000)
  for (const bad of ['0', '3651', '7.5', 'x']) t.equal(refusal({ AUDIT_RETENTION_DAYS: bad })?.variable, 'AUDIT_RETENTION_DAYS', bad)
})

t.test('ADMIN_TLS_*: the combinations and files are checked at start', async t => {
  const certs = makeCerts(t)
  const ok = loadConfig({ ...REQUIRED, ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey, ADMIN_TLS_CA: certs.caCert })
  t.ok(ok.adminTls !== undefined && ok.adminTls.ca !== undefined, 'all three: HTTPS with client certificates')
  t.equal(loadConfig({ ...REQUIRED, ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey }).adminTls?.ca, undefined, 'cert and key: HTTPS without')
  t.equal(loadConfig({ ...REQUIRED }).adminTls, undefined, 'none: plain HTTP')
  const cases: Array<[string, Record<string, string>, string, RegExp]> = [
    ['a CA alone', { ADMIN_TLS_CA: certs.caCert }, 'ADMIN_TLS_CA', /needs ADMIN_TLS_CERT and ADMIN_TLS_KEY/],
    ['a certificate without its key', { ADMIN_TLS_CERT: certs.serverCert }, 'ADMIN_TLS_KEY', /is required with ADMIN_TLS_CERT/],
    ['a key without its certificate', { ADMIN_TLS_KEY: certs.serverKey, ADMIN_TLS_CA: certs.caCert }, 'ADMIN_TLS_CERT', /is required with ADMIN_TLS_KEY/],
    ['an unreadable file', { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: `${certs.serverKey}.nope` }, 'ADMIN_TLS_KEY', /cannot be read \(ENOENT\)/],
    ['a key of another certificate', { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.clientKey }, 'ADMIN_TLS_CERT', /not a usable certificate and key/],
    ['a CA that is no certificate', { ADMIN_TLS_CERT: certs.serverCert, ADMIN_TLS_KEY: certs.serverKey, ADMIN_TLS_CA: certs.serverKey }, 'ADMIN_TLS_CA', /not a usable CA certificate/]
  ]
  for (const [label, env, variable, message] of cases) t.match(refusal(env)?.problems, [{ variable, message }], label)
})
