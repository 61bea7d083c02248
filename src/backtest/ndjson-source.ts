// The journal from an export file: one JSON decision a line (`extauth decisions export`), read as a stream so
// memory stays the same whatever the file's size.
import { createReadStream } from 'node:fs'
import { StringDecoder } from 'node:string_decoder'
import type { JournalEntry, JournalSource } from '../domain/journal.js'

/** Entries with their arrival as epoch ms, read in batches: a replay of millions pays per batch, not per entry. */
export interface TimedBatch { entries: JournalEntry[], atMs: number[] }

/** A source that can also say how far back it reaches, so a replay can tell a quiet hour from missing history. */
export interface BacktestSource extends JournalSource {
  /** arrival (epoch ms) of the oldest entry the source holds; null when it holds none */
  earliestMs?: () => Promise<number | null>
  /** the same entries as read(), in batches with their arrival parsed */
  readBatches?: (fromMs: number, toMs: number) => AsyncIterable<TimedBatch>
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
  if (typeof e.arrivedAt !== 'string') return 'arrivedAt must be an ISO 8601 time'
  if (e.request === null || typeof e.request !== 'object') return 'request must be an object'
  if (typeof e.code !== 'string' || typeof e.reason !== 'string') return 'code and reason must be strings'
  if (typeof e.debit !== 'number' || !Number.isSafeInteger(e.debit) || e.debit < 0) return 'debit must be an integer amount in minor units'
  return null
}

const URN_KEY = '"urn":"'

/**
 * Which of `shares` a line belongs to, by its customer, without parsing it: the urn as written after the first
 * `"urn":"` (an export writes it so; inside a JSON string the quotes would be escaped). A line written
 * otherwise is parsed for it. The same urn written the same way always lands in the same share.
 */
export function shareOfLine (text: string, shares: number): number {
  let urn: string
  const i = text.indexOf(URN_KEY)
  if (i >= 0) {
    const from = i + URN_KEY.length
    const to = text.indexOf('"', from)
    urn = text.slice(from, to < 0 ? text.length : to)
  } else {
    try {
      const v = JSON.parse(text) as { urn?: unknown }
      urn = typeof v.urn === 'string' ? v.urn : ''
    } catch {
      // the share that gets urn '' reports the bad line
      urn = ''
    }
  }
  let h = 0x811c9dc5
  for (let k = 0; k < urn.length; k++) {
    h ^= urn.charCodeAt(k)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % shares
}

export class NdjsonJournal implements BacktestSource {
  constructor (readonly file: string) {}

  /** The file's lines in batches (one per chunk read), without the line ends. */
  private async * lines (): AsyncIterable<string[]> {
    const decoder = new StringDecoder('utf8')
    let rest = ''
    for await (const chunk of createReadStream(this.file, { highWaterMark: 1 << 20 })) {
      const text = rest + decoder.write(chunk as Buffer)
      const out: string[] = []
      let p = 0
      for (let q = text.indexOf('\n'); q >= 0; q = text.indexOf('\n', p)) {
        out.push(text.charCodeAt(q - 1) === 13 ? text.slice(p, q - 1) : text.slice(p, q))
        p = q + 1
      }
      rest = text.slice(p)
      yield out
    }
    rest += decoder.end()
    if (rest !== '') yield [rest]
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
    for await (const batch of this.lines()) {
      for (const text of batch) {
        line++
        if (text.trim() === '') continue
        return Date.parse(this.parse(text, line).arrivedAt)
      }
    }
    return null
  }

  /** The whole file is read: an export is oldest first, but entries decided in the same instant may interleave. */
  async * readBatches (fromMs: number, toMs: number, keep?: (line: string) => boolean): AsyncIterable<TimedBatch> {
    let line = 0
    for await (const batch of this.lines()) {
      const entries: JournalEntry[] = []
      const atMs: number[] = []
      for (const text of batch) {
        line++
        if (text === '' || (keep !== undefined && !keep(text))) continue
        const e = this.parse(text, line)
        const at = Date.parse(e.arrivedAt)
        if (Number.isNaN(at)) throw new JournalLineError(this.file, line, 'arrivedAt must be an ISO 8601 time')
        if (at >= fromMs && at < toMs) { entries.push(e); atMs.push(at) }
      }
      yield { entries, atMs }
    }
  }

  async * read (fromMs: number, toMs: number): AsyncIterable<JournalEntry> {
    for await (const b of this.readBatches(fromMs, toMs)) yield * b.entries
  }
}
