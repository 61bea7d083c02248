// The journal from an export file: one JSON decision a line (`extauth decisions export`), read as a stream so
// memory stays the same whatever the file's size.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import type { JournalEntry, JournalSource } from '../domain/journal.js'

/** A source that can also say how far back it reaches, so a replay can tell a quiet hour from missing history. */
export interface BacktestSource extends JournalSource {
  /** arrival (epoch ms) of the oldest entry the source holds; null when it holds none */
  earliestMs?: () => Promise<number | null>
}

export class JournalLineError extends Error {
  constructor (readonly file: string, readonly line: number, reason: string) {
    super(`${file}:${line}: ${reason}`)
    this.name = 'JournalLineError'
  }
}

/** The reason a parsed line is not a journal entry, or null. Checks what a replay reads, not every field. */
function invalid (v: unknown): string | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object'
  const e = v as Partial<JournalEntry>
  if (e.v !== 1) return `unknown version ${JSON.stringify(e.v)} (expected 1)`
  if (typeof e.urn !== 'string' || typeof e.reference !== 'string') return 'urn and reference must be strings'
  if (typeof e.arrivedAt !== 'string' || Number.isNaN(Date.parse(e.arrivedAt))) return 'arrivedAt must be an ISO 8601 time'
  if (e.request === null || typeof e.request !== 'object') return 'request must be an object'
  if (typeof e.code !== 'string' || typeof e.reason !== 'string') return 'code and reason must be strings'
  if (typeof e.debit !== 'number' || !Number.isSafeInteger(e.debit) || e.debit < 0) return 'debit must be an integer amount in minor units'
  return null
}

export class NdjsonJournal implements BacktestSource {
  constructor (readonly file: string) {}

  private lines (): AsyncIterable<string> {
    return createInterface({ input: createReadStream(this.file, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity })
  }

  private parse (text: string, line: number): JournalEntry {
    let v: unknown
    try {
      v = JSON.parse(text)
    } catch (err) {
      throw new JournalLineError(this.file, line, `not JSON (${(err as Error).message})`)
    }
    const why = invalid(v)
    if (why !== null) throw new JournalLineError(this.file, line, why)
    return v as JournalEntry
  }

  async earliestMs (): Promise<number | null> {
    let line = 0
    for await (const text of this.lines()) {
      line++
      if (text.trim() === '') continue
      return Date.parse(this.parse(text, line).arrivedAt)
    }
    return null
  }

  /** The whole file is read: an export is oldest first, but entries decided in the same instant may interleave. */
  async * read (fromMs: number, toMs: number): AsyncIterable<JournalEntry> {
    let line = 0
    for await (const text of this.lines()) {
      line++
      if (text === '') continue
      const e = this.parse(text, line)
      const at = Date.parse(e.arrivedAt)
      if (at >= fromMs && at < toMs) yield e
    }
  }
}
