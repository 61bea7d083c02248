// Latency summaries for the load and bench scripts.

/** Nearest-rank percentile of ascending-sorted values (p in 0..100). */
export function percentile (sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number
}

export function sortedCopy (values: number[]): Float64Array {
  return Float64Array.from(values).sort()
}

export const ms = (v: number): string => Number.isFinite(v) ? (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) : '-'

export function countsLine (counts: Map<string, number>): string {
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`).join('  ') || '-'
}

export function bump (counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1)
}
