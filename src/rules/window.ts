// Limit windows: rolling (`Nm`, `Nh`, `Nd`) or calendar (`day`, `week`, `month` in TIMEZONE).
import { zonedParts, zonedTimeToEpoch, type ZonedParts } from '../time.js'

const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
const DAY_MS = 24 * HOUR_MS

/** Longest rolling window: the store keeps entries this long, so it bounds memory per customer. */
export const windowMsMax = 31 * DAY_MS

export type CalendarPeriod = 'day' | 'week' | 'month'

export type Window =
  | { kind: 'rolling', lengthMs: number }
  | { kind: 'calendar', period: CalendarPeriod }

/**
 * How long the store must keep an entry for a calendar window. One hour more than the longest period so a
 * day or week with a DST change (25 h) and a 31-day month still see all their entries.
 */
export const CALENDAR_RETAIN_MS: Readonly<Record<CalendarPeriod, number>> = Object.freeze({
  day: 25 * HOUR_MS,
  week: 7 * DAY_MS + HOUR_MS,
  month: 31 * DAY_MS + HOUR_MS
})

const UNIT_MS: Readonly<Record<string, number>> = { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS }
const ROLLING = /^([1-9][0-9]{0,5})([mhd])$/

/** The written forms of a window, for the rule files' JSON Schema (the 31-day bound is checked on load). */
export const WINDOW_PATTERN = '^([1-9][0-9]{0,5}[mhd]|day|week|month)$'

/** The parsed window, or a reason it is not one. */
export function parseWindow (text: string): Window | { error: string } {
  if (text === 'day' || text === 'week' || text === 'month') return { kind: 'calendar', period: text }
  const m = ROLLING.exec(text)
  if (m === null) return { error: `"${text}"` }
  const lengthMs = Number(m[1]) * (UNIT_MS[m[2] as string] as number)
  if (lengthMs > windowMsMax) return { error: `"${text}" is longer than 31d` }
  return { kind: 'rolling', lengthMs }
}

/**
 * The last period start worked out per period: every decision of a day asks for the same midnight, and finding
 * it costs several zoned-time look-ups. Keyed by the zone and the local date asked from, which fix the answer.
 */
interface StartSlot { zone: string, date: number, startMs: number }
const startSlots: Record<CalendarPeriod, StartSlot> = {
  day: { zone: '', date: Number.NaN, startMs: 0 },
  week: { zone: '', date: Number.NaN, startMs: 0 },
  month: { zone: '', date: Number.NaN, startMs: 0 }
}

/**
 * Start (epoch ms) of the calendar period containing nowMs, in the zone. Weeks start on Monday (ISO).
 * Where a DST change skips local midnight the start is the first instant of the local day that exists.
 */
export function calendarStartMs (period: CalendarPeriod, nowMs: number, timeZone: string): number {
  const p = zonedParts(nowMs, timeZone)
  const slot = startSlots[period]
  const date = (p.year * 100 + p.month) * 100 + p.day
  if (slot.date !== date || slot.zone !== timeZone) {
    slot.startMs = periodStartMs(period, p, timeZone)
    slot.date = date
    slot.zone = timeZone
  }
  const start = slot.startMs
  // zonedTimeToEpoch may land an hour off on a skipped midnight; never put the start after now.
  return start > nowMs ? nowMs : start
}

/** The local midnight the period of the local date `p` starts at, as zonedTimeToEpoch finds it. */
function periodStartMs (period: CalendarPeriod, p: Readonly<ZonedParts>, timeZone: string): number {
  let year = p.year
  let month = p.month
  let day = p.day
  if (period === 'month') {
    day = 1
  } else if (period === 'week') {
    // Calendar arithmetic on a UTC date is exact: no zone offsets are involved in counting days back.
    const monday = new Date(Date.UTC(year, month - 1, day - (p.isoWeekday - 1)))
    year = monday.getUTCFullYear()
    month = monday.getUTCMonth() + 1
    day = monday.getUTCDate()
  }
  return zonedTimeToEpoch(timeZone, year, month, day)
}
