// Faults a simulator can be told to inject per route: latency, an HTTP error status, a malformed body,
// a connection that never answers or is cut. Set them through options or through POST /__sim/faults.
// 'before' faults stop the request before the party acts; 'after' ones let it act and then lose or
// mangle the answer: the case where a caller must not assume nothing happened.

export interface Fault {
  /** wait this long before handling (real time: use it for latency, not for tests of timeouts) */
  delayMs?: number
  /** answer this HTTP status with a small JSON error */
  status?: number
  /** 'json': a cut-off body; 'schema': valid JSON of the wrong shape */
  malformed?: 'json' | 'schema'
  /** never answer (the connection stays open until the client gives up) */
  hang?: boolean
  /** destroy the connection without an answer */
  reset?: boolean
  /** default 'before' */
  phase?: 'before' | 'after'
  /** apply to this many next requests, then clear itself; default: until cleared */
  times?: number
}

export class FaultBook<R extends string> {
  readonly routes: readonly R[]
  private readonly faults = new Map<R, Fault>()
  private readonly counts = new Map<R, number>()

  constructor (routes: readonly R[], initial: Partial<Record<R, Fault>> = {}) {
    this.routes = routes
    for (const [route, fault] of Object.entries(initial) as Array<[R, Fault | undefined]>) {
      if (fault !== undefined) this.set(route, fault)
    }
  }

  isRoute (route: unknown): route is R {
    return typeof route === 'string' && (this.routes as readonly string[]).includes(route)
  }

  set (route: R | '*', fault: Fault): void {
    const checked = checkFault(fault)
    for (const r of route === '*' ? this.routes : [route]) this.faults.set(r, { ...checked })
  }

  clear (route?: R): void {
    if (route === undefined) this.faults.clear()
    else this.faults.delete(route)
  }

  /** Counts the request and returns the fault to apply to it, if any. */
  take (route: R): Fault | undefined {
    this.counts.set(route, (this.counts.get(route) ?? 0) + 1)
    const fault = this.faults.get(route)
    if (fault?.times !== undefined) {
      fault.times--
      if (fault.times <= 0) this.faults.delete(route)
    }
    return fault
  }

  /** Requests received on a route since start (or since resetCounts). */
  count (route: R): number {
    return this.counts.get(route) ?? 0
  }

  allCounts (): Record<string, number> {
    return Object.fromEntries(this.routes.map((r) => [r, this.count(r)]))
  }

  resetCounts (): void {
    this.counts.clear()
  }
}

export class FaultError extends Error {}

/** Validates a fault given over HTTP or in options; throws FaultError naming the bad field. */
export function checkFault (f: unknown): Fault {
  if (typeof f !== 'object' || f === null || Array.isArray(f)) throw new FaultError('fault must be an object')
  const o = f as Record<string, unknown>
  const known = new Set(['delayMs', 'status', 'malformed', 'hang', 'reset', 'phase', 'times'])
  for (const k of Object.keys(o)) if (!known.has(k)) throw new FaultError(`unknown fault field ${k}`)
  const int = (k: string, min: number, max: number): void => {
    const v = o[k]
    if (v !== undefined && (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max)) throw new FaultError(`${k} must be an integer from ${min} to ${max}`)
  }
  int('delayMs', 0, 600_000)
  int('status', 100, 599)
  int('times', 1, 1_000_000)
  if (o.malformed !== undefined && o.malformed !== 'json' && o.malformed !== 'schema') throw new FaultError('malformed must be json or schema')
  if (o.phase !== undefined && o.phase !== 'before' && o.phase !== 'after') throw new FaultError('phase must be before or after')
  for (const k of ['hang', 'reset']) if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new FaultError(`${k} must be a boolean`)
  return o as Fault
}
