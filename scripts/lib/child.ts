// Starting and stopping a server as a child process for the load and bench scripts: free ports, output to a
// log file, wait until it answers, SIGTERM and wait for the exit.
import { spawn, type ChildProcess } from 'node:child_process'
import { openSync, closeSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'undici'

export interface Child {
  proc: ChildProcess
  logFile: string
  /** SIGTERM, then SIGKILL after killAfterMs; resolves with the exit code */
  stop: (killAfterMs?: number) => Promise<number | null>
  /** the last lines of the log, for an error message */
  tail: (lines?: number) => string
  /** deletes the log file (after a clean run) */
  removeLog: () => void
}

/**
 * `wrap`: a command that runs node for us and becomes it (`['taskset', '-c', '3']`, which execs node on core 3),
 * so the child's pid is node's.
 */
export function startChild (args: string[], opts: { env: NodeJS.ProcessEnv, cwd: string, logFile: string, wrap?: string[] }): Child {
  const fd = openSync(opts.logFile, 'w')
  const [cmd, argv] = opts.wrap !== undefined && opts.wrap.length > 0
    ? [opts.wrap[0] as string, [...opts.wrap.slice(1), process.execPath, ...args]]
    : [process.execPath, args]
  const proc = spawn(cmd, argv, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', fd, fd] })
  closeSync(fd)
  let exitCode: number | null | undefined
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code) => { exitCode = code; resolve(code) })
  })
  return {
    proc,
    logFile: opts.logFile,
    tail: (lines = 20) => {
      try {
        return readFileSync(opts.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
      } catch {
        return ''
      }
    },
    removeLog: () => { rmSync(opts.logFile, { force: true }) },
    stop: async (killAfterMs = 15_000) => {
      if (exitCode !== undefined) return exitCode
      proc.kill('SIGTERM')
      const timer = setTimeout(() => { proc.kill('SIGKILL') }, killAfterMs)
      const code = await exited
      clearTimeout(timer)
      return code
    }
  }
}

/** Polls url until it answers 200, the child exits, or timeoutMs passes. */
export async function waitUntilReady (child: Child, url: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    if (child.proc.exitCode !== null) throw new Error(`the server exited with ${child.proc.exitCode} before it was ready:\n${child.tail()}`)
    try {
      const res = await request(url, { headersTimeout: 1000, bodyTimeout: 1000 })
      await res.body.dump()
      if (res.statusCode === 200) return
    } catch { /* not listening yet */ }
    if (Date.now() > until) throw new Error(`the server did not answer ${url} within ${timeoutMs} ms:\n${child.tail()}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
