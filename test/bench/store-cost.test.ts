// bench/store-cost.ts builds the store as JavaScript and runs it in worker processes, each decision checked to
// be an approval: run small here so that a bench that no longer runs (a changed store option, an input the
// store refuses) fails in the suite, not only when someone runs it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

t.test('the store bench runs the floor and the built store, every call an approval', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/store-cost.ts'), '--calls', '300', '--rounds', '1'], { cwd: root, timeout: 180_000 })
  t.match(stdout, /floor \(one EVALSHA\)\s+\d+\.\d/)
  t.match(stdout, /\nextauth\s+\d+\.\d/)
  t.match(stdout, /beyond one round trip: -?\d+\.\d µs/)
})
