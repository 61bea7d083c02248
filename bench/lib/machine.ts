// What the benches share about this machine: whether a command is installed, a process's CPU time, running a
// process on one core (taskset, when there), a redis-server of their own (on one core when asked), building a
// checkout as production does, and reading rounds that took turns.
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from '../../scripts/lib/free-port.js'
import { REPO_ROOT } from '../../scripts/lib/extauth.js'
import { percentile, sortedCopy } from '../../scripts/lib/stats.js'
import { copyLua } from '../../scripts/copy-lua.js'

export function has (cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** whether onCore pins (util-linux's taskset is installed) */
export const pinned = has('taskset')

/** argv to run on one core: [command, args] */
export const onCore = (core: number, argv: string[]): [string, string[]] => pinned ? ['taskset', ['-c', String(core), ...argv]] : [argv[0] as string, argv.slice(1)]

const clockTicks = ((): number => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return ticks > 0 ? ticks : 100
  } catch {
    return 100
  }
})()

/** User + system CPU seconds of a process so far (Linux, from /proc); NaN elsewhere or once it has gone. */
export function cpuSeconds (pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / clockTicks
  } catch {
    return Number.NaN
  }
}

/**
 * Builds a checkout with tsc and one of its projects (tsconfig.build.json: its dist/, as production does). `tsc -b`
 * compiles nothing when the output is newer than every source, as after `npm run build:bench` (a step of
 * `npm test`, so that the tests running benches side by side do not compile into the same folder at once).
 */
export function buildCheckout (dir: string, project: string): void {
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-b', join(dir, project)], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] })
  // tsc emits only what it compiles: the .lua files the built modules read when loaded go beside them, as
  // `npm run build` copies them into dist/ (scripts/copy-lua.ts); a checkout from before them has none
  copyLua(join(dir, 'src'), project === 'tsconfig.bench.json' ? join(dir, '.bench-build', 'src') : join(dir, 'dist'))
}

export const median = (xs: number[]): number => percentile(sortedCopy(xs), 50)

/**
 * `a` against `b`, round by round (the machine's other work moves a round's pair alike, so the ratio of each
 * pair is steadier than the ratio of medians): "median 0.87, lower in 6 of 6 rounds".
 */
export function roundByRound (a: number[], b: number[]): string {
  const ratios = a.map((x, i) => x / (b[i] as number))
  return `median ${median(ratios).toFixed(2)}, lower in ${ratios.filter((r) => r < 1).length} of ${ratios.length} rounds`
}

/**
 * A redis-server of its own on a free loopback port, with a client to it; stop() ends both. `core`: pinned to
 * that core (when taskset is there); `bin`: the server's binary (default redis-server); `wrap`: a command the
 * server runs under (valgrind's, see Instructions), which may take some seconds to start it.
 */
export async function ownRedis (o: { core?: number, bin?: string, wrap?: string[] } = {}): Promise<{ port: number, admin: Redis, stop: () => void }> {
  const port = await freePort()
  const args = [...o.wrap ?? [], o.bin ?? 'redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  const [bin, argv] = o.core === undefined ? [args[0] as string, args.slice(1)] : onCore(o.core, args)
  const server = spawn(bin, argv, { stdio: 'ignore' })
  const admin = new Redis(port, { retryStrategy: (n) => (n > 600 ? null : 50) })
  admin.on('error', () => {})
  const stop = (): void => {
    admin.disconnect()
    server.kill()
  }
  try {
    await new Promise<void>((resolve, reject) => { admin.once('ready', resolve); admin.once('end', () => { reject(new Error('redis-server did not start')) }) })
  } catch (err) {
    stop()
    throw err
  }
  return { port, admin, stop }
}

/**
 * The instructions a process runs, counted by valgrind's callgrind (`valgrind --tool=callgrind`, the process
 * started under `Instructions.wrap`): unlike CPU time, the same work counts the same whatever else the machine
 * runs (a percent or two apart from run to run, with how the calls happen to batch). `zero` sets the count to
 * 0, `read` gives the instructions of the main thread since (Redis runs its commands there).
 */
export const Instructions = {
  available: (): boolean => has('valgrind') && has('callgrind_control'),
  wrap: ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null', '--dump-line=no', '--compress-strings=no'],
  zero (pid: number): void {
    execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' })
  },
  read (pid: number): number {
    const out = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    const count = /^\s*Th 1\s+([\d,]+)\s*$/m.exec(out)?.[1]
    if (count === undefined) throw new Error(`callgrind_control printed no count for the main thread of ${pid}:\n${out}`)
    return Number(count.replaceAll(',', ''))
  }
}
