// Where pending deadline compensations outlive the process. A compensation is written here before it is sent
// to the store and marked done once the store took it, so a process killed in between leaves it to the next
// start (README "Money"). Written with a plain write (no fsync): it survives the process, not the host.
import { appendFileSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { processAlive, readJournalLines, storeTag } from '../process-journal-file.js'
import type { AbandonInput } from '../store/types.js'

export interface CompensationJournal {
  /** records a compensation about to be sent; returns only once it would survive the process */
  add: (id: string, input: AbandonInput) => void
  /** the store took it */
  done: (id: string) => void
  /** compensations added and not done, oldest first */
  pending: () => Array<{ id: string, input: AbandonInput }>
}

interface Line { a: 'add' | 'done', id: string, input?: AbandonInput }

function replay (lines: Iterable<Line>): Array<{ id: string, input: AbandonInput }> {
  const open = new Map<string, AbandonInput>()
  for (const l of lines) {
    if (l.a === 'add' && l.input !== undefined) open.set(l.id, l.input)
    else if (l.a === 'done') open.delete(l.id)
  }
  return [...open].map(([id, input]) => ({ id, input }))
}

/** In memory: for the embedded store (whose state dies with the process anyway) and for simulations. */
export class MemoryCompensationJournal implements CompensationJournal {
  private lines: Line[] = []
  add (id: string, input: AbandonInput): void { this.lines.push({ a: 'add', id, input: structuredClone(input) }) }
  done (id: string): void {
    this.lines.push({ a: 'done', id })
    if (replay(this.lines).length === 0) this.lines = []
  }

  pending (): Array<{ id: string, input: AbandonInput }> { return replay(this.lines) }
}

/**
 * One NDJSON file per process and store (`compensations-<store>-<pid>.ndjson` in `dir`), emptied whenever
 * nothing is pending. At start it adopts the files of processes of the same store that are gone: several
 * instances (or programs with other key prefixes) on one host never take or wipe each other's.
 */
export class FileCompensationJournal implements CompensationJournal {
  private open = 0
  private readonly path: string

  constructor (dir: string, storeIdentity: string, pid = process.pid) {
    mkdirSync(dir, { recursive: true })
    const store = storeTag(storeIdentity)
    this.path = join(dir, `compensations-${store}-${pid}.ndjson`)
    const own = this.pending()
    this.open = own.length
    for (const name of readdirSync(dir)) {
      const m = new RegExp(`^compensations-${store}-(\\d+)\\.ndjson$`).exec(name)
      if (m === null || Number(m[1]) === pid || processAlive(Number(m[1]))) continue
      const other = join(dir, name)
      for (const { id, input } of readLines(other)) if (!own.some((o) => o.id === id)) this.add(id, input)
      unlinkSync(other)
    }
  }

  add (id: string, input: AbandonInput): void {
    appendFileSync(this.path, JSON.stringify({ a: 'add', id, input }) + '\n')
    this.open++
  }

  done (id: string): void {
    this.open = Math.max(0, this.open - 1)
    if (this.open === 0) writeFileSync(this.path, '')
    else appendFileSync(this.path, JSON.stringify({ a: 'done', id }) + '\n')
  }

  pending (): Array<{ id: string, input: AbandonInput }> {
    return readLines(this.path)
  }
}

/** What a file holds pending (a line cut short by a kill: its compensation was never sent, add returns before sending). */
function readLines (path: string): Array<{ id: string, input: AbandonInput }> {
  return replay(readJournalLines<Line>(path))
}
