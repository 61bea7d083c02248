// A small seeded generator (mulberry32): the same seed gives the same sequence of simulated traffic.

export type Random = () => number

export function seededRandom (seed: number): Random {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer in [min, max]. */
export function intBetween (rnd: Random, min: number, max: number): number {
  return min + Math.floor(rnd() * (max - min + 1))
}

export function pick<T> (rnd: Random, items: readonly T[]): T {
  const item = items[Math.floor(rnd() * items.length)]
  if (item === undefined) throw new Error('pick from an empty list')
  return item
}

export function digits (rnd: Random, n: number): string {
  let s = ''
  for (let i = 0; i < n; i++) s += String(Math.floor(rnd() * 10))
  return s
}
