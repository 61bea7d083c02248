// The stdout logger's buffer: flushed at least once a flush interval, and lines dropped while it was full
// (stdout not read fast enough) are counted and reported once, on the next flush.
import t from 'tap'
import { EventEmitter } from 'node:events'
import { Writable } from 'node:stream'
import { createLogger, flushAndReportDrops, handInBatches, LOG_BATCH_CHARS, LOG_FLUSH_INTERVAL_MS } from '../src/logger.js'
import { manualClock } from './helpers/manual-clock.js'

/** A destination that counts its flushes and emits 'drop' when told to. */
function fakeDestination (): EventEmitter & { flush: () => void, flushes: number } {
  const d = Object.assign(new EventEmitter(), { flushes: 0, flush: () => { d.flushes++ } })
  return d
}

t.test('a quiet buffer is flushed every interval; dropped lines are reported once, with their count', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger('info', new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } }))
  const clock = manualClock(0)
  const dest = fakeDestination()
  flushAndReportDrops(dest, log, clock.timers)

  clock.advanceTo(LOG_FLUSH_INTERVAL_MS - 1)
  t.equal(dest.flushes, 0, 'not before the interval')
  clock.advanceTo(LOG_FLUSH_INTERVAL_MS)
  t.equal(dest.flushes, 1, 'flushed after one interval')
  t.same(lines, [], 'nothing dropped, nothing reported')

  for (let i = 0; i < 3; i++) dest.emit('drop', 'a line')
  clock.advanceTo(2 * LOG_FLUSH_INTERVAL_MS)
  t.equal(dest.flushes, 2)
  t.equal(lines.length, 1, 'one report for the lines dropped in the interval')
  t.match(lines[0], { level: 50, dropped: 3, msg: 'log lines dropped: stdout was not read fast enough' })

  clock.advanceTo(3 * LOG_FLUSH_INTERVAL_MS)
  t.equal(dest.flushes, 3, 'and it goes on flushing')
  t.equal(lines.length, 1, 'a count is reported once')
})

t.test('lines reach the writer in batches, in order, and every flush hands over what waits', async (t) => {
  const written: string[] = []
  const calls: string[] = []
  const dest = {
    write: (text: string) => { written.push(text); return true },
    flush: (cb?: (err?: Error) => void) => { calls.push('flush'); cb?.() },
    flushSync: () => { calls.push('flushSync') }
  }
  handInBatches(dest)
  const line = (i: number): string => `{"n":${i},"msg":"${'x'.repeat(90)}"}\n`
  let sent = ''
  let i = 0
  while (sent.length + line(i).length < LOG_BATCH_CHARS) sent += line(i++)
  for (let j = 0; j < i; j++) dest.write(line(j))
  t.same(written, [], 'nothing handed over below the batch size')
  dest.write(line(i))
  t.same(written, [sent + line(i)], 'one batch, the lines in order')

  dest.write(line(100))
  let flushed = false
  dest.flush(() => { flushed = true })
  t.same(written.slice(1), [line(100)], 'a flush hands over what waits')
  t.ok(flushed, 'and then flushes the writer')
  dest.write(line(101))
  dest.flushSync()
  t.same(written.slice(2), [line(101)], 'so does the exit\'s flushSync')
  dest.flush()
  t.equal(written.length, 3, 'nothing handed over when nothing waits')
  t.same(calls, ['flush', 'flushSync', 'flush'])
})

t.test('a dropped batch counts its lines', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const log = createLogger('info', new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } }))
  const clock = manualClock(0)
  const dest = fakeDestination()
  flushAndReportDrops(dest, log, clock.timers)
  dest.emit('drop', '{"a":1}\n{"a":2}\n{"a":3}\n')
  dest.emit('drop', '{"a":4}\n')
  clock.advanceTo(LOG_FLUSH_INTERVAL_MS)
  t.match(lines[0], { level: 50, dropped: 4 })
})
