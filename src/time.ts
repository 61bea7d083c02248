// Wall-clock helpers in an IANA time zone. Formatters are cached per zone: building one is costly and
// they are used on every request.
const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter (timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short'
    })
    formatters.set(timeZone, f)
  }
  return f
}

export interface ZonedParts {
  year: number
  month: number // 1-12
  day: number
  hour: number
  minute: number
  second: number
  /** ISO weekday: 1 = Monday ... 7 = Sunday */
  isoWeekday: number
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 }

function intlParts (epochMs: number, timeZone: string): ZonedParts {
  const out: ZonedParts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, isoWeekday: 0 }
  for (const p of formatter(timeZone).formatToParts(epochMs)) {
    switch (p.type) {
      case 'year': out.year = Number(p.value); break
      case 'month': out.month = Number(p.value); break
      case 'day': out.day = Number(p.value); break
      case 'hour': out.hour = Number(p.value); break
      case 'minute': out.minute = Number(p.value); break
      case 'second': out.second = Number(p.value); break
      case 'weekday': out.isoWeekday = WEEKDAYS[p.value] ?? 0; break
      default: break // literals, era, dayPeriod...: not read
    }
  }
  return out
}

const HOUR_MS = 3_600_000

/** The zone's offset (ms) at a whole second, read through Intl. */
function offsetAt (epochMs: number, timeZone: string): number {
  const p = intlParts(epochMs, timeZone)
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - epochMs
}

/**
 * Per zone, the offset through each UTC hour asked about recently (NaN when the offset changes within the
 * hour). Intl is slow (microseconds a call) and an offset changes a few times a year: ask it twice an hour,
 * not once a request. Several hours are kept because a calendar window's start is worked out at its midnight.
 */
const zoneHours = new Map<string, Map<number, number>>()
const zoneHoursMax = 256

function hourOffset (hourStartMs: number, timeZone: string): number {
  let hours = zoneHours.get(timeZone)
  if (hours === undefined) zoneHours.set(timeZone, hours = new Map<number, number>())
  let offsetMs = hours.get(hourStartMs)
  if (offsetMs === undefined) {
    const a = offsetAt(hourStartMs, timeZone)
    const b = offsetAt(hourStartMs + HOUR_MS - 1000, timeZone)
    offsetMs = a === b ? a : Number.NaN
    if (hours.size >= zoneHoursMax) hours.clear()
    hours.set(hourStartMs, offsetMs)
  }
  return offsetMs
}

/**
 * The zoned parts of the last few seconds asked about. Every request asks for its arrival second (facts,
 * calendar windows, the local day) and a calendar window for the midnight its period starts at: a few slots
 * serve them all without a Date per call. The parts are shared: never change one.
 */
interface PartsSlot { zone: string, second: number, parts: Readonly<ZonedParts> }
const partsSlots: PartsSlot[] = Array.from({ length: 4 }, () => ({ zone: '', second: Number.NaN, parts: { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, isoWeekday: 0 } }))
let partsNext = 0

/** The wall-clock parts of an instant in the zone, to the second. */
export function zonedParts (epochMs: number, timeZone: string): Readonly<ZonedParts> {
  const second = Math.floor(epochMs / 1000)
  for (const slot of partsSlots) {
    if (slot.second === second && slot.zone === timeZone) return slot.parts
  }
  const slot = partsSlots[partsNext] as PartsSlot
  partsNext = (partsNext + 1) % partsSlots.length
  slot.parts = computeParts(second * 1000, timeZone)
  slot.second = second
  slot.zone = timeZone
  return slot.parts
}

const DAY_MS = 24 * HOUR_MS

/**
 * The offset of the last hour computeParts saw, and the local date of the last local day: a replay asks about
 * instants seconds apart, each a new second, and most of them fall in the same hour and day as the one before.
 */
let hourZone = ''
let hourStartMsSeen = Number.NaN
let hourOffsetMs = Number.NaN
let daysSeen = Number.NaN
let dayYear = 0
let dayMonth = 0
let dayOfMonth = 0

/** Sets dayYear/dayMonth/dayOfMonth to the proleptic Gregorian date `days` days after 1970-01-01 (H. Hinnant's civil_from_days). */
function civilFromDays (days: number): void {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  dayOfMonth = doy - Math.floor((153 * mp + 2) / 5) + 1
  dayMonth = mp < 10 ? mp + 3 : mp - 9
  dayYear = yoe + era * 400 + (dayMonth <= 2 ? 1 : 0)
}

function computeParts (epochMs: number, timeZone: string): ZonedParts {
  const hourStartMs = Math.floor(epochMs / HOUR_MS) * HOUR_MS
  let offsetMs: number
  if (hourStartMs === hourStartMsSeen && timeZone === hourZone) {
    offsetMs = hourOffsetMs
  } else {
    offsetMs = hourOffset(hourStartMs, timeZone)
    // An hour with an offset change is read through Intl, second by second, and not kept here.
    if (Number.isNaN(offsetMs)) return intlParts(epochMs, timeZone)
    hourZone = timeZone
    hourStartMsSeen = hourStartMs
    hourOffsetMs = offsetMs
  }
  // The local wall clock as if it were UTC: whole days since the epoch and the time into the day.
  const localMs = epochMs + offsetMs
  const days = Math.floor(localMs / DAY_MS)
  const secondOfDay = (localMs - days * DAY_MS) / 1000
  if (days !== daysSeen) {
    civilFromDays(days)
    daysSeen = days
  }
  // 1970-01-01 was a Thursday (ISO 4)
  const weekday = (((days + 3) % 7) + 7) % 7 + 1
  const hour = Math.floor(secondOfDay / 3600)
  const minute = Math.floor((secondOfDay - hour * 3600) / 60)
  return { year: dayYear, month: dayMonth, day: dayOfMonth, hour, minute, second: secondOfDay - hour * 3600 - minute * 60, isoWeekday: weekday }
}

/** Throws a RangeError for a zone name Intl does not know. */
export function assertTimeZone (timeZone: string): void {
  formatter(timeZone)
}

const pad2 = (n: number): string => (n < 10 ? '0' : '') + String(n)

// Every answer carries the time to the second: format each second once, not each answer.
let lastSecond = Number.NaN
let lastZone = ''
let lastText = ''

/** YYYYMMDDHHMMSS, 24-hour, in the zone (the answer's responseDateTime). */
export function formatDateTime14 (epochMs: number, timeZone: string): string {
  const second = Math.floor(epochMs / 1000)
  if (second === lastSecond && timeZone === lastZone) return lastText
  const p = zonedParts(epochMs, timeZone)
  lastText = String(p.year).padStart(4, '0') + pad2(p.month) + pad2(p.day) + pad2(p.hour) + pad2(p.minute) + pad2(p.second)
  lastSecond = second
  lastZone = timeZone
  return lastText
}

/**
 * The epoch ms at which the given local wall-clock time occurs in the zone. A wall-clock time that a DST
 * change skips or repeats has no single answer; one within the change's offset of it is returned.
 */
export function zonedTimeToEpoch (timeZone: string, year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const wanted = Date.UTC(year, month - 1, day, hour, minute, second)
  // Start from the zone offset at the UTC guess, then correct once more for offsets that change in between.
  let guess = wanted
  for (let i = 0; i < 3; i++) {
    const p = zonedParts(guess, timeZone)
    const seen = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
    const diff = wanted - seen
    if (diff === 0) return guess
    guess += diff
  }
  return guess
}
