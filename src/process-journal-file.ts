// What the per-process journal files have in common (the deadline compensations, src/decision/
// compensation-journal.ts, and the stand-in approvals, src/standin/journal.ts): one NDJSON file per process and
// store, named by a short tag of the store so that programs with other stores on one host never take each
// other's, adopted from processes that are gone, and read back skipping a last line cut short by a kill.
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'

/** A short, stable tag of the store a journal belongs to (its identity: URL and key prefix), for file names. */
export function storeTag (storeIdentity: string): string {
  return createHash('sha256').update(storeIdentity).digest('hex').slice(0, 12)
}

/** Whether the process `pid` still runs (another user's process counts as running). */
export function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The lines of a journal file, [] when there is none. A line that is not JSON was cut short by a kill mid-write:
 * it is skipped (each journal says why such a line never counted).
 */
export function readJournalLines<L> (path: string): L[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const out: L[] = []
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue
    try {
      out.push(JSON.parse(raw) as L)
    } catch {
      // cut short by a kill mid-write
    }
  }
  return out
}
