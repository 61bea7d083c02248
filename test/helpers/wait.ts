// Waiting on a condition in the fault tests: polled until it holds; the time it took is returned so a test can
// report it. The bound is a test's own (derived from its configured deadlines), never a speed requirement.
export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

export async function until (what: string, pred: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<number> {
  const t0 = performance.now()
  for (;;) {
    if (await pred()) return performance.now() - t0
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(everyMs)
  }
}
