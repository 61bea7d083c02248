// Admin answers carry instants as epoch milliseconds (`decidedAtMs`, `reversal.atMs`...), which tools and
// tests compute with; people and log tools read ISO 8601. Every `…AtMs` / `atMs` number in an admin answer
// gets an ISO 8601 sibling without the `Ms` (`decidedAt`, `at`), added on the way out so no route has to
// remember it. The numeric fields stay.

const AT_MS = /^(.*[aA]t)Ms$/
/** an instant from 2001 to 2286: epoch ms that are not instants (durations, offsets) are left alone */
const MIN_MS = 1_000_000_000_000
const MAX_MS = 9_999_999_999_999
const DEPTH_MAX = 8

function isInstant (v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= MIN_MS && v <= MAX_MS
}

/** The value with ISO siblings added; the input is never changed (answers may be frozen or shared). */
export function withIsoTimes (value: unknown, depth = 0): unknown {
  if (depth > DEPTH_MAX || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map(v => { const w = withIsoTimes(v, depth + 1); if (w !== v) changed = true; return w })
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set in the map callback, which the type checker's narrowing does not see
    return changed ? out : value
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value
  const rec = value as Record<string, unknown>
  let out: Record<string, unknown> | null = null
  for (const [k, v] of Object.entries(rec)) {
    const w = withIsoTimes(v, depth + 1)
    if (w !== v) (out ??= { ...rec })[k] = w
    const m = AT_MS.exec(k)
    if (m === null || !isInstant(v)) continue
    const iso = m[1] as string
    if (Object.hasOwn(rec, iso)) continue
    (out ??= { ...rec })[iso] = new Date(v).toISOString()
  }
  return out ?? value
}
