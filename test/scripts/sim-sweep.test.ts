// npm run sim:sweep, small: seeds on a store in worker processes, the clean ones counted per store, a run
// that fails listed with the command that replays it and the exit status 1, bad options refused.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')
const sweep = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, stdout: string, stderr: string }> => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'scripts/sim-sweep.ts'), ...args], { cwd: root, timeout: 240_000, env: { ...process.env, ...env } })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number, stdout?: string, stderr?: string }
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

t.test('two seeds on the memory store, two at a time: each run reported, the clean ones counted', async (t) => {
  const r = await sweep(['--seeds', '2', '--steps', '40', '--stores', 'memory', '--jobs', '2', '--first-seed', '700'])
  t.equal(r.code, 0, r.stdout + r.stderr)
  t.match(r.stdout, /seed 700 memory: clean/)
  t.match(r.stdout, /seed 701 memory: clean/)
  t.match(r.stdout, /memory: 2 seeds × 40 steps clean \(80 steps\), 0 failed, 0 cut/)
  t.match(r.stdout, /no failing seed/)
})

t.test('a run that fails is listed with its replay command, and the sweep exits 1', async (t) => {
  // a run whose options its process refuses stands for any run that ends other than clean
  const r = await sweep(['--seeds', '1', '--steps', '40', '--stores', 'memory', '--jobs', '1', '--first-seed', '9'], { SIM_FAULT_RATE: 'lots' })
  t.equal(r.code, 1)
  t.match(r.stdout, /failing seeds \(1\):\n {2}seed 9 memory: exit 1/)
  t.match(r.stdout, /SIM_SEED=9 SIM_STEPS=40 SIM_STORE=memory npm run sim:money/)
  t.match(r.stdout, /memory: 0 seeds × 40 steps clean/)
})

t.test('bad options are refused before any run', async (t) => {
  for (const args of [['--seeds', '0'], ['--steps', 'many'], ['--stores', 'cluster'], ['--minutes', '-1']]) {
    const r = await sweep(args)
    t.not(r.code, 0, args.join(' '))
    t.notMatch(r.stdout, /\] seed /, `${args.join(' ')}: nothing ran`)
  }
})
