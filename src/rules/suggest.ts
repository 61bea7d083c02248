// "Did you mean ...?" for names an operator mistyped: the closest known name by edit distance, when it is
// close enough to be the likely intent (a letter or two off, or differing only in case).

/** Edit distance counting a swap of two neighbours as one edit ("whne" -> "when"). */
function distance (a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)]
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      const prev = rows[i - 1] as number[]
      let d = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      cur.push(d)
    }
    rows.push(cur)
  }
  return (rows[a.length] as number[])[b.length] as number
}

/** The known name `given` most likely stands for, or null when none is close. */
export function closest (given: string, known: readonly string[]): string | null {
  const lower = given.toLowerCase()
  const sameButCase = known.find(k => k.toLowerCase() === lower)
  if (sameButCase !== undefined) return sameButCase
  // One edit in a short name, two in a longer one: "chanel" -> "channel", "notin" -> "notIn".
  const limit = given.length <= 4 ? 1 : 2
  let best: string | null = null
  let bestD = limit + 1
  for (const k of known) {
    const d = distance(lower, k.toLowerCase(), limit)
    if (d < bestD) { best = k; bestD = d }
  }
  return best
}

/** `did you mean \`x\`? valid: a, b, c` (or just the list). */
export function didYouMean (given: string, known: readonly string[], what = 'valid'): string {
  const c = closest(given, known)
  const list = `${what}: ${known.join(', ')}`
  return c === null ? list : `did you mean \`${c}\`? ${list}`
}
