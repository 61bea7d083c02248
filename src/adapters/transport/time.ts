// yyyyMMddHHmmss in UTC: the risk service's txnTimestamp and the prepaid platform's requestDateTime.

function pad (n: number, width: number): string {
  return String(n).padStart(width, '0')
}

export function formatUtcTimestamp (d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCDate(), 2)}` +
    `${pad(d.getUTCHours(), 2)}${pad(d.getUTCMinutes(), 2)}${pad(d.getUTCSeconds(), 2)}`
}

/** A 14-digit string that names a real instant (no 31 February, no hour 24). */
export function isCalendarTimestamp (s: string): boolean {
  if (!/^\d{14}$/.test(s)) return false
  const n = (from: number, to: number): number => Number(s.slice(from, to))
  const t = new Date(Date.UTC(n(0, 4), n(4, 6) - 1, n(6, 8), n(8, 10), n(10, 12), n(12, 14)))
  return formatUtcTimestamp(t) === s
}
