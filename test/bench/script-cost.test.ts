// bench/script-cost.ts sends the authorize script's arguments (RedisStore.authorizeArgs) with redis-benchmark,
// in both forms of the script: when a call fails or too few run, the bench stops with an error. Run small
// here so that a bench that no longer runs fails in the suite, not only when someone runs it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { Instructions } from '../../bench/lib/machine.js'

const root = join(import.meta.dirname, '..', '..')
/** a name as a regular expression matching it as it is */
const literal = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

t.test('the script bench runs both forms of the authorize script with its arguments, the fair floor\'s script with and without extauth\'s writes, and the script without each of its parts', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/script-cost.ts'), '--calls', '300', '--rounds', '2', '--parts'], { cwd: root, timeout: 60_000 })
  // name, µs in the command, CPU µs of the server, µs of the commands the script called, then the rounds
  const floorWithWrites = ['fair floor + record, event', 'fair floor + record, event, indexes']
  for (const name of ['EVALSHA of the script', 'FCALL of the function', 'FCALL, channel control', 'FCALL, control, ATM limits', 'the fair floor\'s script', ...floorWithWrites]) {
    t.match(stdout, new RegExp(`${literal(name)}\\s+\\d+\\.\\d\\s+\\d+\\.\\d\\s+\\d+\\.\\d\\s+\\d+\\.\\d \\d+\\.\\d\n`), `${name}: its figures and two rounds`)
  }
  t.match(stdout, /HINCRBY \d/, 'the approval debited: the script ran to its commit')
  // --parts: each part taken out of a copy of the function (a text no longer in the script stops the bench)
  for (const part of ['journal time index', 'journal reference index', 'event (XADD', 'event stream bound', 'stale-hold check', 'decision record']) {
    t.match(stdout, new RegExp(`\n  ${part.replace('(', '\\(')}[^\n]*?\\s+-?\\d+\\.\\d µs\\s+\\(-?\\d+ %\\)   -?\\d+\\.\\d -?\\d+\\.\\d\n`), `${part}: what it costs, and round by round`)
  }
  for (const name of ['FCALL of the function', 'FCALL, channel control', 'FCALL, control, ATM limits', ...floorWithWrites]) {
    // 300 calls are a few clock ticks of CPU time: a ratio may be '-' here, never anything else
    t.match(stdout, new RegExp(`\n  ${literal(name)}\\s+(\\d+\\.\\d\\d|-)×   (\\d+\\.\\d\\d|-) (\\d+\\.\\d\\d|-)\n`), `${name}: its Redis CPU against the fair floor's, and round by round`)
  }
})

// valgrind (Debian's valgrind) counts the instructions; where it is not installed outside CI the test is
// skipped with a line saying so, in CI (CI=true, .ci/run installs it) a missing valgrind fails
const noValgrind = Instructions.available() ? null : 'valgrind is not installed (apt-get install valgrind)'
if (noValgrind !== null && process.env.CI === 'true') throw new Error(`${noValgrind}: CI must run the instruction count`)

t.test('with --instructions it counts the instructions Redis runs, under valgrind', { skip: noValgrind ?? false }, async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/script-cost.ts'), '--instructions', '--calls', '100', '--rounds', '1'], { cwd: root, timeout: 180_000 })
  t.match(stdout, /redis-server under valgrind \(callgrind\) counting instructions/)
  // thousands of instructions a call, the second figure of each line
  const count = (name: string): number => Number(new RegExp(`\n${literal(name)}\\s+\\d+\\.\\d\\s+(\\d+\\.\\d)\\s`).exec(stdout)?.[1])
  const [floor, writes, indexes, fcall] = ['the fair floor\'s script', 'fair floor + record, event', 'fair floor + record, event, indexes', 'FCALL of the function'].map(count)
  // counted, not timed: each script does all the work of the one before it and more (an XADD, a ZADD and an
  // HSETNX are thousands of instructions each), so the counts rise whatever else the machine runs
  t.ok((floor as number) > 0, `the fair floor's script counted: ${floor}`)
  t.ok((writes as number) > (floor as number), `the record and event add to it: ${writes} > ${floor}`)
  t.ok((indexes as number) > (writes as number), `the indexes add to that: ${indexes} > ${writes}`)
  t.ok((fcall as number) > (indexes as number), `extauth's function does all of it and more: ${fcall} > ${indexes}`)
  t.match(stdout, /\n {2}fair floor \+ record, event, indexes\s+\d+\.\d\d× {3}\d+\.\d\d\n/, 'a ratio to the fair floor\'s count, never a dash')
})
