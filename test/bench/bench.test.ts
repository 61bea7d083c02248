// npm run bench, run small (a 1 s warm-up, two 1 s rounds, two connections): a bench that no longer runs, answers
// anything but 00, or stops printing extauth's CPU per decision against the fair floor fails the suite. Its
// figures are not looked at: no timing. It talks to the shared Redis under a prefix of its own, deleted at the end.
// It runs with --heap-profile, so that the profiles of the measured runs, and where each server allocates, are
// there too.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { SHARED_REDIS_URL } from '../helpers/redis.js'

const root = join(import.meta.dirname, '..', '..')

t.test('bench prints, per decision, extauth against the fair floor in each process, round by round, beside the targets', async (t) => {
  const heapDir = t.testdir()
  const args = ['--duration', '1', '--rounds', '2', '--warmup', '1', '--urns', '50', '--connections', '2', '--log-level', 'warn', '--heap-profile', heapDir]
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/bench.ts'), ...args],
    { cwd: root, env: { ...process.env, REDIS_URL: SHARED_REDIS_URL, SHED_EVENT_LOOP_DELAY_MS: '0' }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 })
  t.notMatch(stdout, /WARNING/, 'every answer 200 and 00')
  const section = stdout.slice(stdout.indexOf('extauth / fair floor, per decision:'))
  t.ok(section.length > 0 && stdout.includes('extauth / fair floor, per decision:'), 'the section is there')
  const ratio = /(\d+\.\d\d)×/
  for (const [label, target] of [['Node CPU', '1.4'], ['Redis CPU', '1.6']]) {
    const line = section.split('\n').find((l) => l.trim().startsWith(label as string)) ?? ''
    t.match(line, ratio, `${label ?? ''}: a ratio`)
    t.equal(line.match(/(\d+\.\d\d)×/g)?.length, 1 + 2, `${label ?? ''}: overall and one for each of the 2 rounds`)
    t.match(line, new RegExp(`target ≤ ${(target as string).replace('.', '\\.')}×: (met|not met)`))
  }
  t.match(section, /allocation\s+\d+\.\d KB\s+fair floor \d+\.\d KB\s+target ≤ 28 KB: (met|not met)/)
  for (const name of ['extauth', 'fair-floor', 'floor-1-round-trip']) {
    t.match(stdout, new RegExp(`where .+ allocates, over its [1-9]\\d* measured requests \\(${name}\\.run1\\.heapprofile, ${name}\\.run2\\.heapprofile\\):\\n  sampled: \\d+\\.\\d KB a request\\n  by the function that allocated:\\n\\s+\\d+\\.\\d\\d KB`), `${name}: where it allocates, from its two runs' profiles`)
  }
  t.same(readdirSync(heapDir).sort(), ['extauth', 'fair-floor', 'floor-1-round-trip'].flatMap((n) => [`${n}.run1.heapprofile`, `${n}.run2.heapprofile`]).sort(),
    'one profile a measured run kept, none of the warm-ups')
  t.match(stdout, /cleanup: deleted \d+ keys under extauth-bench:/)
})
