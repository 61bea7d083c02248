// Zoned wall-clock parts, worked out from an offset kept per hour, against Intl itself: across DST changes,
// half- and quarter-hour zones, and a zone whose DST shift is half an hour.
import t from 'tap'
import { zonedParts } from '../src/time.js'
import { calendarStartMs } from '../src/rules/window.js'
import { seededRandom } from '../src/sim/prng.js'

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

/** A seeded step of 1 to `max`, so a walk is the same on every run. */
function steps (seed: number, max: number): () => number {
  const rnd = seededRandom(seed)
  return () => 1 + Math.floor(rnd() * max)
}

function sameParts (ms: number, zone: string): boolean {
  const got = zonedParts(ms, zone)
  const want = intl(ms, zone)
  return got.year === want.year && got.month === want.month && got.day === want.day && got.hour === want.hour &&
    got.minute === want.minute && got.second === want.second && got.isoWeekday === want.isoWeekday
}

t.test('zonedParts agrees with Intl over a replay\'s walk: instants seconds apart, two days either side of each DST change', async t => {
  // 2026: EU 29 Mar 01:00Z / 25 Oct 01:00Z, US 8 Mar 07:00Z / 1 Nov 06:00Z
  const changes: Record<string, number[]> = {
    'Europe/Berlin': [Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 9, 25, 1)],
    'America/New_York': [Date.UTC(2026, 2, 8, 7), Date.UTC(2026, 10, 1, 6)]
  }
  for (const [zone, at] of Object.entries(changes)) {
    for (const change of at) {
      const step = steps(change, 90)
      let mismatches = 0
      let checked = 0
      for (let ms = change - 2 * 86_400_000 + 123; ms < change + 2 * 86_400_000; ms += step() * 1000 + step()) {
        if (!sameParts(ms, zone)) mismatches++
        checked++
      }
      // every second of the minutes around the change itself
      for (let ms = change - 120_000; ms < change + 120_000; ms += 1000) {
        if (!sameParts(ms, zone)) mismatches++
        checked++
      }
      t.equal(mismatches, 0, `${zone} around ${new Date(change).toISOString()}: ${checked} instants`)
    }
  }
})

t.test('zonedParts agrees with Intl when zones alternate, and across years, leap days and the epoch', async t => {
  const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'UTC']
  const instants = [
    Date.UTC(2026, 2, 29, 0, 59, 59), Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 9, 25, 0, 59, 59), Date.UTC(2026, 9, 25, 1),
    Date.UTC(2024, 1, 28, 23, 30), Date.UTC(2024, 1, 29, 23, 30), Date.UTC(2023, 11, 31, 23, 30), Date.UTC(2027, 0, 1, 4, 59, 59),
    Date.UTC(2000, 1, 29, 12), Date.UTC(2100, 1, 28, 23, 30), Date.UTC(1900, 1, 28, 23, 30), Date.UTC(1969, 11, 31, 23, 59, 59),
    Date.UTC(1970, 0, 1), Date.UTC(1960, 5, 15, 3, 4, 5), -1000
  ]
  let mismatches = 0
  for (const ms of instants) {
    // every zone in turn for the same instant, then the next instant a second later
    for (const zone of zones) if (!sameParts(ms, zone)) mismatches++
    for (const zone of zones) if (!sameParts(ms + 1000, zone)) mismatches++
  }
  t.equal(mismatches, 0, `${instants.length * zones.length * 2} instants`)
})

t.test('calendar period starts over a replay\'s walk across DST changes: the local midnight of the day, Monday, the first', async t => {
  const date = (p: { year: number, month: number, day: number }): string => new Date(Date.UTC(p.year, p.month - 1, p.day)).toISOString().slice(0, 10)
  const step = steps(7, 3 * 3600)
  let wrong = 0
  let checked = 0
  for (let ms = Date.UTC(2026, 2, 1); ms < Date.UTC(2026, 3, 10); ms += step() * 1000) {
    // the zones in turn at each instant, as two replays in different zones would ask
    for (const zone of ['Europe/Berlin', 'America/New_York']) {
      const now = zonedParts(ms, zone)
      for (const period of ['day', 'week', 'month'] as const) {
        const start = calendarStartMs(period, ms, zone)
        const s = zonedParts(start, zone)
        const before = zonedParts(start - 1000, zone)
        const first = period === 'day' ? date(now) : period === 'week' ? date({ ...now, day: now.day - now.isoWeekday + 1 }) : date({ ...now, day: 1 })
        // the period starts at the first second of its first local day: the second before is another day
        if (date(s) !== first || s.hour !== 0 || s.minute !== 0 || s.second !== 0 || date(before) === first || start > ms) wrong++
        checked++
      }
    }
  }
  t.equal(wrong, 0, `Europe/Berlin and America/New_York: ${checked} period starts`)
})
