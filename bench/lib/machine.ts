// What the benches share about this machine: whether a command is installed, running a process on one core
// (taskset, when there), and building a checkout as production does.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { REPO_ROOT } from '../../scripts/lib/extauth.js'

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

/** Builds a checkout with tsc and one of its projects (tsconfig.build.json: its dist/, as production does). */
export function buildCheckout (dir: string, project: string): void {
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, project)], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] })
}
