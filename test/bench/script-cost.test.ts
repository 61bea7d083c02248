// bench/script-cost.ts sends the authorize script's arguments (RedisStore.authorizeArgs) with redis-benchmark,
// in both forms of the script: when a call fails or too few run, the bench stops with an error. Run small
// here so that a bench that no longer runs fails in the suite, not only when someone runs it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

t.test('the script bench runs both forms of the authorize script with its arguments', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/script-cost.ts'), '--calls', '300', '--rounds', '1'], { cwd: root, timeout: 60_000 })
  t.match(stdout, /EVALSHA of the script\s+\d+\.\d/)
  t.match(stdout, /FCALL of the function\s+\d+\.\d/)
  t.match(stdout, /HINCRBY \d/, 'the approval debited: the script ran to its commit')
})
