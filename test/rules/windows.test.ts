// Limit windows: rolling starts move with now; calendar periods start at local midnight / Monday / the 1st.
import t from 'tap'
import { parseWindow, windowMsMax } from '../../src/rules/window.js'
import { compile, facts } from './helpers.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

function limitRule (window: string, timezone = 'UTC'): (nowMs: number) => { start: number, retain: number } {
  const set = compile([{
    id: 'l',
    when: { channel: { eq: 'ATM' } },
    limit: { measure: 'count', per: 'card', window, max: 3 },
    then: { decline: '65' }
  }], timezone)
  const f = facts({ channel: 'ATM' })
  return nowMs => {
    const l = set.evaluate(f, nowMs).limits[0]
    if (l === undefined) throw new Error('limit did not match')
    return { start: l.windowStartMs, retain: l.retainMs }
  }
}

t.test('window syntax', async t => {
  t.same(parseWindow('10m'), { kind: 'rolling', lengthMs: 600_000 })
  t.same(parseWindow('1h'), { kind: 'rolling', lengthMs: HOUR })
  t.same(parseWindow('24h'), { kind: 'rolling', lengthMs: DAY })
  t.same(parseWindow('31d'), { kind: 'rolling', lengthMs: windowMsMax })
  t.same(parseWindow('week'), { kind: 'calendar', period: 'week' })
  for (const bad of ['0m', '32d', '745h', '1w', 'h', '1.5h', '-1h', ' 1h', '01h', 'Day', '']) {
    t.ok('error' in parseWindow(bad), `"${bad}" is refused`)
  }
})

t.test('rolling: the window start moves with now; retain is the length', async t => {
  const at = limitRule('10m')
  const now = Date.UTC(2026, 10, 21, 9, 30)
  t.same(at(now), { start: now - 600_000, retain: 600_000 })
  t.same(at(now + 1234), { start: now + 1234 - 600_000, retain: 600_000 })
  t.equal(limitRule('2d')(now).start, now - 2 * DAY)
})

t.test('calendar day resets at local midnight in Asia/Kolkata (UTC+5:30)', async t => {
  const at = limitRule('day', 'Asia/Kolkata')
  const midnightIst = Date.UTC(2026, 10, 20, 18, 30) // 2026-11-21 00:00 IST
  t.equal(at(midnightIst - 1).start, midnightIst - DAY, 'one ms before midnight: the previous day')
  t.equal(at(midnightIst).start, midnightIst)
  t.equal(at(midnightIst + 23 * HOUR).start, midnightIst)
  t.equal(at(midnightIst + 23 * HOUR).retain, 25 * HOUR, 'a day keeps entries 25 h (DST days)')
  t.not(at(midnightIst).start, Date.UTC(2026, 10, 21), 'not UTC midnight')
})

t.test('calendar day in America/New_York across DST changes', async t => {
  const at = limitRule('day', 'America/New_York')
  // 2026-03-08: clocks go from 02:00 EST to 03:00 EDT; the day is 23 h long.
  const mar8 = Date.UTC(2026, 2, 8, 5) // 00:00 EST
  t.equal(at(Date.UTC(2026, 2, 8, 12)).start, mar8)
  t.equal(at(Date.UTC(2026, 2, 9, 3, 59)).start, mar8, '23:59 EDT is still March 8')
  t.equal(at(Date.UTC(2026, 2, 9, 4)).start, Date.UTC(2026, 2, 9, 4), 'midnight EDT starts March 9')
  // 2026-11-01: clocks go from 02:00 EDT back to 01:00 EST; the day is 25 h long.
  const nov1 = Date.UTC(2026, 10, 1, 4) // 00:00 EDT
  t.equal(at(Date.UTC(2026, 10, 2, 4, 59)).start, nov1, '23:59 EST, 24 h 59 min after the day began')
  t.equal(at(Date.UTC(2026, 10, 2, 5)).start, Date.UTC(2026, 10, 2, 5), 'midnight EST starts November 2')
  t.ok(Date.UTC(2026, 10, 2, 5) - nov1 <= at(nov1).retain, 'retain covers the 25-hour day')
})

t.test('calendar week starts on Monday at local midnight', async t => {
  const at = limitRule('week', 'Asia/Kolkata')
  const monday = Date.UTC(2026, 10, 22, 18, 30) // Monday 2026-11-23 00:00 IST
  t.equal(at(monday).start, monday)
  t.equal(at(monday + 6 * DAY + 23 * HOUR).start, monday, 'Sunday 23:00 is the same week')
  t.equal(at(monday - 1).start, monday - 7 * DAY, 'Sunday 23:59:59.999 belongs to the week before')
  t.equal(at(monday).retain, 7 * DAY + HOUR)
  const ny = limitRule('week', 'America/New_York')
  // the week of 2026-11-01 (a Sunday) started Monday 2026-10-26, in EDT
  t.equal(ny(Date.UTC(2026, 10, 1, 12)).start, Date.UTC(2026, 9, 26, 4))
})

t.test('calendar month starts on the 1st at local midnight', async t => {
  const at = limitRule('month', 'America/New_York')
  t.equal(at(Date.UTC(2026, 10, 21, 12)).start, Date.UTC(2026, 10, 1, 4), 'November began in EDT')
  t.equal(at(Date.UTC(2026, 11, 1, 4, 59)).start, Date.UTC(2026, 10, 1, 4), 'Nov 30 23:59 EST')
  t.equal(at(Date.UTC(2026, 11, 1, 5)).start, Date.UTC(2026, 11, 1, 5), 'December 1 00:00 EST')
  t.ok(at(Date.UTC(2026, 11, 1, 5)).retain >= 31 * DAY)
  const ist = limitRule('month', 'Asia/Kolkata')
  t.equal(ist(Date.UTC(2026, 0, 31, 18, 29)).start, Date.UTC(2025, 11, 31, 18, 30), 'January 31 23:59 IST')
  t.equal(ist(Date.UTC(2026, 0, 31, 18, 30)).start, Date.UTC(2026, 0, 31, 18, 30), 'February 1 00:00 IST')
})

t.test('a day whose midnight DST skips starts at its first existing instant', async t => {
  // America/Santiago moves 2026-09-06 00:00 to 01:00; the day begins at 01:00 -03 = 04:00Z.
  const at = limitRule('day', 'America/Santiago')
  t.equal(at(Date.UTC(2026, 8, 6, 12)).start, Date.UTC(2026, 8, 6, 4))
})
