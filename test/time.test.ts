// Zoned wall-clock parts, worked out from an offset kept per hour, against Intl itself: across DST changes,
// half- and quarter-hour zones, and a zone whose DST shift is half an hour.
import t from 'tap'
import { zonedParts } from '../src/time.js'

const formats = new Map<string, Intl.DateTimeFormat>()

function intl (ms: number, timeZone: string): Record<string, number> {
  const f = formats.get(timeZone) ?? new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', weekday: 'short' })
  formats.set(timeZone, f)
  const o: Record<string, number> = {}
  for (const p of f.formatToParts(ms)) {
    if (p.type === 'weekday') o.isoWeekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(p.value) + 1
    else if (p.type !== 'literal') o[p.type] = Number(p.value)
  }
  return o
}

t.test('zonedParts agrees with Intl second by second around offset changes', async t => {
  const zones = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'America/St_Johns']
  // 2026 changes: US 8 Mar / 1 Nov, EU 29 Mar / 25 Oct, Lord Howe 5 Apr / 4 Oct
  const around = [Date.UTC(2026, 2, 8, 7), Date.UTC(2026, 10, 1, 6), Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 9, 25, 1), Date.UTC(2026, 3, 4, 15), Date.UTC(2026, 9, 3, 15), Date.UTC(2026, 10, 23, 12)]
  for (const zone of zones) {
    let mismatches = 0
    for (const c of around) {
      for (let ms = c - 3 * 3_600_000; ms < c + 3 * 3_600_000; ms += 7_777) {
        const got = zonedParts(ms, zone)
        const want = intl(ms, zone)
        if (got.year !== want.year || got.month !== want.month || got.day !== want.day || got.hour !== want.hour || got.minute !== want.minute || got.second !== want.second || got.isoWeekday !== want.isoWeekday) mismatches++
      }
    }
    t.equal(mismatches, 0, zone)
  }
})
