// extauth as a child process (`node --import tsx src/server.ts`), for tests whose client must not share the
// server's event loop (overload, SIGTERM, two instances) and for scripts/soak.ts. Ports are picked free on
// loopback; the child's stdout (pino JSON lines) is captured; helpers send signals and wait for the exit.
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { dirname, resolve } from 'node:path'
import { readFileSync } from 'node:fs'
import { freePort } from './redis.js'
import { ADMIN_TOKEN, BANK_ID, CLIENT_ID, CONSUMER_KEY } from './config.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface ServerProcessOptions {
  /** added to (and overriding) the test defaults: platform headers of test/helpers/config.ts, loopback, no rule watching */
  env?: Record<string, string>
  /** how long start-up may take (tsx compiles on the fly; a busy machine is slow) */
  readyTimeoutMs?: number
  /** keep at most this many log lines (older ones are dropped); default 200,000 */
  logLinesMax?: number
  /** echo the child's stderr (and stdout when LOG_LEVEL is low) to ours; for scripts */
  echo?: boolean
  /** flags for the child's node (before `--import tsx`) */
  nodeArgs?: string[]
}

export interface Exit { code: number | null, signal: NodeJS.Signals | null }

export interface ServerProcess {
  proc: ChildProcess
  pid: number
  publicUrl: string
  adminUrl: string
  publicPort: number
  adminPort: number
  /** raw stdout lines (pino JSON), oldest first */
  rawLogs: string[]
  /** the log lines parsed (non-JSON lines are skipped) */
  logs: () => Array<Record<string, unknown>>
  stderr: () => string
  /** resolves when the child has exited */
  exited: Promise<Exit>
  signal: (sig: NodeJS.Signals) => void
  /** SIGTERM, then SIGKILL if it has not exited within `timeoutMs`; resolves with the exit */
  stop: (timeoutMs?: number) => Promise<Exit>
  kill: () => Promise<Exit>
  /** resident set size of the child from /proc, in bytes (null when not available) */
  rssBytes: () => number | null
  waitForLog: (pred: (line: Record<string, unknown>) => boolean, timeoutMs: number) => Promise<Record<string, unknown>>
}

/** The environment the child runs with: only what it needs (not tap's NODE_OPTIONS or our REDIS_URL). */
export function childEnv (over: Record<string, string>, ports: { port: number, adminPort: number }): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'TZ']
  const base: Record<string, string> = {}
  for (const k of keep) { const v = process.env[k]; if (v !== undefined) base[k] = v }
  return {
    ...base,
    EXTAUTH_CONSUMER_KEY: CONSUMER_KEY,
    EXTAUTH_CLIENT_ID: CLIENT_ID,
    EXTAUTH_BANK_ID: BANK_ID,
    ADMIN_TOKEN,
    HOST: '127.0.0.1',
    ADMIN_HOST: '127.0.0.1',
    PORT: String(ports.port),
    ADMIN_PORT: String(ports.adminPort),
    RULES_DIR: 'test/fixtures/rules-empty',
    RULES_WATCH: 'false',
    LOG_LEVEL: 'info',
    ...over
  }
}

export async function startServer (t: Teardown | null, opts: ServerProcessOptions = {}): Promise<ServerProcess> {
  const port = await freePort()
  let adminPort = await freePort()
  while (adminPort === port) adminPort = await freePort()
  const env = childEnv(opts.env ?? {}, { port, adminPort })
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', 'src/server.ts'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  const linesMax = opts.logLinesMax ?? 200_000
  const rawLogs: string[] = []
  let stderr = ''
  let partial = ''
  const waiters = new Set<{ pred: (l: Record<string, unknown>) => boolean, resolve: (l: Record<string, unknown>) => void }>()
  proc.stdout.setEncoding('utf8')
  proc.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop() ?? ''
    for (const line of parts) {
      if (line === '') continue
      rawLogs.push(line)
      if (rawLogs.length > linesMax) rawLogs.shift()
      if (opts.echo === true) process.stdout.write(line + '\n')
      if (waiters.size > 0) {
        let parsed: Record<string, unknown> | null = null
        try { parsed = JSON.parse(line) as Record<string, unknown> } catch {}
        if (parsed !== null) {
          for (const w of waiters) if (w.pred(parsed)) { waiters.delete(w); w.resolve(parsed) }
        }
      }
    }
  })
  proc.stderr.setEncoding('utf8')
  proc.stderr.on('data', (chunk: string) => {
    if (stderr.length < 1_000_000) stderr += chunk
    if (opts.echo === true) process.stderr.write(chunk)
  })
  const exited = new Promise<Exit>((resolve) => {
    proc.once('exit', (code, signal) => { resolve({ code, signal }) })
  })

  const waitForLog = async (pred: (l: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>> => {
    for (const line of rawLogs) {
      try {
        const l = JSON.parse(line) as Record<string, unknown>
        if (pred(l)) return l
      } catch {}
    }
    return await new Promise((resolve, reject) => {
      const w = { pred, resolve: (l: Record<string, unknown>) => { clearTimeout(timer); resolve(l) } }
      const timer = setTimeout(() => { waiters.delete(w); reject(new Error(`log line not seen within ${timeoutMs} ms`)) }, timeoutMs)
      timer.unref()
      waiters.add(w)
      exited.then(() => {
        if (!waiters.has(w)) return
        waiters.delete(w)
        clearTimeout(timer)
        reject(new Error(`extauth exited before the log line was seen; stderr: ${stderr.slice(0, 2000)}`))
      }, () => {})
    })
  }

  const isRunning = (): boolean => proc.exitCode === null && proc.signalCode === null
  const stop = async (timeoutMs = 15_000): Promise<Exit> => {
    if (isRunning()) proc.kill('SIGTERM')
    const timer = setTimeout(() => { if (isRunning()) proc.kill('SIGKILL') }, timeoutMs)
    const e = await exited
    clearTimeout(timer)
    return e
  }
  const kill = async (): Promise<Exit> => {
    if (isRunning()) proc.kill('SIGKILL')
    return await exited
  }
  // registered before waiting, so a start-up that fails is cleaned up too
  t?.teardown(async () => { await kill() })

  try {
    // ready: the 'extauth ready' line, or both listeners answering (log lines may sit in the process's
    // output buffer for a moment, and below LOG_LEVEL info the line is not written at all)
    const timeoutMs = opts.readyTimeoutMs ?? 30_000
    const listening = (async () => {
      await waitForHttp(`http://127.0.0.1:${port}/health/live`, timeoutMs, exited)
      if (env.ADMIN_TOKEN !== '') await waitForHttp(`http://127.0.0.1:${adminPort}/metrics`, timeoutMs, exited)
    })()
    const logged = waitForLog((l) => l.msg === 'extauth ready', timeoutMs)
    logged.catch(() => {})
    listening.catch(() => {})
    await Promise.race([logged, listening])
  } catch (err) {
    await kill()
    throw err
  }

  return {
    proc,
    pid: proc.pid ?? 0,
    publicUrl: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    publicPort: port,
    adminPort,
    rawLogs,
    logs: () => rawLogs.flatMap((l) => { try { return [JSON.parse(l) as Record<string, unknown>] } catch { return [] } }),
    stderr: () => stderr,
    exited,
    signal: (sig) => { if (isRunning()) proc.kill(sig) },
    stop,
    kill,
    rssBytes: () => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid ?? 0}/status`, 'utf8'))
        return m === null ? null : Number(m[1]) * 1024
      } catch {
        return null
      }
    },
    waitForLog
  }
}

async function waitForHttp (url: string, timeoutMs: number, exited: Promise<Exit>): Promise<void> {
  let gone = false
  exited.then(() => { gone = true }, () => {})
  const until = Date.now() + timeoutMs
  for (;;) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set in the then() callback above, which the type checker's narrowing does not see
    if (gone) throw new Error('extauth exited before it answered')
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) })
      await res.arrayBuffer()
      if (res.ok) return
    } catch {}
    if (Date.now() > until) throw new Error(`extauth did not answer at ${url} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** One value of a Prometheus text exposition (the first sample whose name and labels match), or null. */
export function metricValue (text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (m === null || m[1] !== name) continue
    const lbl = m[2] ?? ''
    if (Object.entries(labels).every(([k, v]) => lbl.includes(`${k}="${v}"`))) return Number(m[3])
  }
  return null
}

/** The sum of every sample of a metric (over all label sets), 0 when absent. */
export function metricSum (text: string, name: string): number {
  let sum = 0
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line)
    if (m !== null && m[1] === name) sum += Number(m[3])
  }
  return sum
}
