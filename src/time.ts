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

export function zonedParts (epochMs: number, timeZone: string): ZonedParts {
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
    }
  }
  return out
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
