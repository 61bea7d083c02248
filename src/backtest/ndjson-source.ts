// The journal from an export file: one JSON decision a line (`extauth decisions export`), read as a stream so
// memory stays the same whatever the file's size.
import { createReadStream } from 'node:fs'
import type { JournalEntry, JournalSource } from '../domain/journal.js'
import { parseExportLine } from './entry-line.js'

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
  // any field may hold anything: the line is read from a file
  const e = v as { [K in keyof JournalEntry]?: unknown }
  if (e.v !== 1) return `unknown version ${JSON.stringify(e.v)} (expected 1)`
  if (typeof e.urn !== 'string' || typeof e.reference !== 'string') return 'urn and reference must be strings'
  if (typeof e.arrivedAt !== 'string') return 'arrivedAt must be an ISO 8601 time'
  if (e.request === null || typeof e.request !== 'object') return 'request must be an object'
  if (typeof e.code !== 'string' || typeof e.reason !== 'string') return 'code and reason must be strings'
  if (typeof e.debit !== 'number' || !Number.isSafeInteger(e.debit) || e.debit < 0) return 'debit must be an integer amount in minor units'
  return null
}

/** FNV-1a over a urn's UTF-16 code units (its bytes, when ASCII): spreads customers over shares. */
function hashStep (h: number, c: number): number {
  return Math.imul(h ^ c, 0x01000193)
}
const HASH_START = 0x811c9dc5

/** Which of `shares` a customer belongs to. */
export function shareOfUrn (urn: string, shares: number): number {
  let h = HASH_START
  for (let k = 0; k < urn.length; k++) h = hashStep(h, urn.charCodeAt(k))
  return (h >>> 0) % shares
}

/** How an export line starts (src/store/decision-entry.ts, JSON.stringify): the urn is the line's second value. */
const LINE_START = Buffer.from('{"v":1,"urn":"')

/** The urn of a line that does not start as an export's, or '' (the share that gets '' reports a bad line). */
function urnOfText (text: string): string {
  try {
    const v = JSON.parse(text) as { urn?: unknown } | null
    return v !== null && typeof v === 'object' && typeof v.urn === 'string' ? v.urn : ''
  } catch {
    return ''
  }
}

/**
 * Which of `shares` the line in bytes [from, to) of `b` belongs to, by its customer, without decoding it when
 * it starts as an export's line and its urn is plain ASCII; any other line is parsed for its urn. Either way
 * a urn lands in the share `shareOfUrn` gives it, however it is written.
 */
export function shareOfLine (b: Buffer, from: number, to: number, shares: number): number {
  const n = LINE_START.length
  let i = from
  if (to - from > n) {
    while (i - from < n && b[i] === LINE_START[i - from]) i++
  }
  if (i - from === n) {
    let h = HASH_START
    for (; i < to; i++) {
      const c = b[i] as number
      if (c === 34) return (h >>> 0) % shares
      // an escape or a non-ASCII character: the urn as JSON.parse reads it
      if (c === 92 || c >= 128) break
      h = hashStep(h, c)
    }
  }
  return shareOfUrn(urnOfText(b.toString('utf8', from, to)), shares)
}

const BATCH_ENTRIES = 32

/** Where the line starting at `p` ends: its line end, or the end of the block. */
function lineEnd (b: Buffer, p: number): number {
  const q = b.indexOf(10, p)
  return q < 0 ? b.length : q
}

/** The customers of one worker: the lines of share `share` of `shares` (shareOfLine). */
export interface Share { share: number, shares: number }

export class NdjsonJournal implements BacktestSource {
  constructor (readonly file: string) {}

  /**
   * The file in blocks of whole lines (the last may lack its line end), as read: lines are found and routed
   * in bytes, and only the lines a replay takes are decoded. A line end is one byte whatever the encoding
   * around it (UTF-8), so a line decodes the same alone as in the file.
   */
  private async * blocks (): AsyncIterable<Buffer> {
    let rest: Buffer | null = null
    for await (const chunk of createReadStream(this.file, { highWaterMark: 1 << 20 })) {
      let buf = chunk as Buffer
      if (rest !== null) {
        // Only the line that spans two reads is copied, not the whole read.
        const first = buf.indexOf(10)
        if (first < 0) { rest = Buffer.concat([rest, buf]); continue }
        yield Buffer.concat([rest, buf.subarray(0, first + 1)])
        buf = buf.subarray(first + 1)
      }
      const last = buf.lastIndexOf(10)
      rest = last + 1 < buf.length ? buf.subarray(last + 1) : null
      if (last >= 0) yield buf.subarray(0, last + 1)
    }
    if (rest !== null) yield rest
  }

  /** The entry of one line: the export's own layout read directly (entry-line.ts), anything else by JSON.parse. */
  private parse (text: string, line: number): JournalEntry {
    let v: unknown = parseExportLine(text)
    if (v === null) {
      try {
        v = JSON.parse(text)
      } catch (err) {
        throw new JournalLineError(this.file, line, `not JSON (${(err as Error).message})`)
      }
    }
    const why = invalid(v)
    if (why !== null) throw new JournalLineError(this.file, line, why)
    return v as JournalEntry
  }

  async earliestMs (): Promise<number | null> {
    let line = 0
    for await (const b of this.blocks()) {
      for (let p = 0; p < b.length;) {
        const q = lineEnd(b, p)
        line++
        const text = b.toString('utf8', p, q > p && b[q - 1] === 13 ? q - 1 : q)
        if (text.trim() !== '') return Date.parse(this.parse(text, line).arrivedAt)
        p = q + 1
      }
    }
    return null
  }

  /**
   * The whole file is read: an export is oldest first, but entries decided in the same instant may interleave.
   * With `share`, only the lines of that share's customers are decoded and parsed.
   */
  async * readBatches (fromMs: number, toMs: number, share?: Share): AsyncIterable<TimedBatch> {
    let line = 0
    let entries: JournalEntry[] = []
    let atMs: number[] = []
    for await (const b of this.blocks()) {
      for (let p = 0; p < b.length;) {
        const q = lineEnd(b, p)
        const to = q > p && b[q - 1] === 13 ? q - 1 : q
        line++
        if (to > p && (share === undefined || shareOfLine(b, p, to, share.shares) === share.share)) {
          const e = this.parse(b.toString('utf8', p, to), line)
          // Only a urn written twice with different values (JSON.parse keeps the last) could be routed elsewhere.
          if (share !== undefined && shareOfUrn(e.urn, share.shares) !== share.share) throw new JournalLineError(this.file, line, 'the urn is written twice')
          const at = Date.parse(e.arrivedAt)
          if (Number.isNaN(at)) throw new JournalLineError(this.file, line, 'arrivedAt must be an ISO 8601 time')
          if (at >= fromMs && at < toMs) {
            entries.push(e)
            atMs.push(at)
            // Small batches: a batch's entries are alive until it is replayed, and the fewer live entries a
            // young-generation collection finds, the less it copies; an entry replayed soon after it was
            // read is still in the processor's cache (256 entries of ~2 KB each were not).
            if (entries.length === BATCH_ENTRIES) {
              yield { entries, atMs }
              entries = []
              atMs = []
            }
          }
        }
        p = q + 1
      }
    }
    if (entries.length > 0) yield { entries, atMs }
  }

  async * read (fromMs: number, toMs: number): AsyncIterable<JournalEntry> {
    for await (const b of this.readBatches(fromMs, toMs)) yield * b.entries
  }
}
