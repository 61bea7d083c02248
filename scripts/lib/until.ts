/**
 * Polls `check` every `everyMs` until it holds (a check that throws counts as not yet), for the scripts and
 * benches that wait on a process they started: a port answering, a replica in sync, a file written whole.
 * Throws `timed out waiting for <what>` after timeoutMs.
 */
export async function until (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 50): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
