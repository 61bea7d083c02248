// The stdout logger's buffer: flushed at least once a flush interval, and lines dropped while it was full
// (stdout not read fast enough) are counted and reported once, on the next flush.
import t from 'tap'
import { EventEmitter } from 'node:events'
import { Writable } from 'node:stream'
import { createLogger, flushAndReportDrops, LOG_FLUSH_INTERVAL_MS } from '../src/logger.js'
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
