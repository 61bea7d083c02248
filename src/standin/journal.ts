// The stand-in journal (STANDIN_JOURNAL_DIR): every stand-in approval is written here and flushed to disk
// (fdatasync) before its 00 is answered, and replayed into the store when it answers again. One NDJSON file
// per process and store, `standin-<store>-<pid>.ndjson`; the files of processes that are gone (a kill, a
// crash, a host restart with the disk kept) are adopted by the next process of the same store on this host,
// at its start and while it runs. Lines: {"a":"add", id, seq, atMs, input}, {"a":"done", id} (replayed),
// {"a":"void", id, seq, atMs} (the deadline answered 05 first: that entry never to be replayed; a later
// entry of the same reference is another; a void without seq and atMs, as written before, voids every entry of
// its id). A line cut short by a kill was never flushed, so its approval was never answered: it is skipped. A file holds one outage: the approvals
// replayed stay in it (an add and a done line) until the outage is over, so a process that takes it over
// mid-outage or mid-replay counts them in its caps too (the caps hold for the whole outage).
import { closeSync, fdatasync, fdatasyncSync, fstatSync, ftruncateSync, mkdirSync, openSync, readdirSync, readSync, renameSync, unlinkSync, write, writeSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { AuthorizeInput } from '../store/types.js'
import { processAlive, readJournalLines, storeTag } from '../process-journal-file.js'

const writeAsync = promisify(write)
const fdatasyncAsync = promisify(fdatasync)

/** The journal's asynchronous writes: the file system's, or a test's that holds or fails a flush. */
export interface JournalIo {
  write: (fd: number, text: string) => Promise<unknown>
  fdatasync: (fd: number) => Promise<void>
}

export const fileIo: JournalIo = {
  write: async (fd, text) => await writeAsync(fd, text),
  fdatasync: async (fd) => { await fdatasyncAsync(fd) }
}

export interface StandInEntry {
  /** the customer and reference: one stand-in decision per reference */
  id: string
  /** order of writing in its file (ties of atMs) */
  seq: number
  /** the request's arrival */
  atMs: number
  /** the authorize input the replay sends, with `standIn: true` */
  input: AuthorizeInput
}

/** What journals held of the outage: approvals still owed to the store, and those already replayed into it. */
export interface Adopted {
  owed: StandInEntry[]
  replayed: StandInEntry[]
}

export interface StandInJournal {
  /** Resolves once the entry would survive the process and the host (flushed to disk). */
  append: (entry: StandInEntry) => Promise<void>
  /**
   * The entry must never be replayed (its request was answered 05): written and flushed before returning. It
   * names the entry by its id, seq and arrival: a later entry of the same reference (a repeat decided again) is
   * not voided by it.
   */
  void: (entry: EntryName) => void
  /** The entry was replayed into the store (not flushed: a replay sent twice is answered from the store). */
  done: (id: string) => void
  /**
   * Entries of processes that are gone (and this file's own at start), now this one's, oldest first, each
   * once: those to replay, and those of the outage already replayed (for the caps).
   */
  adopt: () => Adopted
  /** The outage is over (everything replayed, the store answers): its entries are no longer kept. */
  endOutage: () => void
  close: () => void
}

/** The id of the stand-in decision of a reference. */
export function entryId (urn: string, reference: string): string {
  return JSON.stringify([urn, reference])
}

interface Line { a: 'add' | 'done' | 'void', id: string, seq?: number, atMs?: number, input?: AuthorizeInput }

/** What a void line names of its entry (a void without seq and atMs, as written before them, voids every entry of its id). */
export interface EntryName { id: string, seq: number, atMs: number }

const nameOf = (e: { id: string, seq?: number, atMs?: number }): string => JSON.stringify([e.id, e.seq ?? 0, e.atMs ?? 0])
const voidLine = (e: EntryName): string => JSON.stringify({ a: 'void', id: e.id, seq: e.seq, atMs: e.atMs }) + '\n'

/** Oldest first: by arrival, then by order of writing. */
export function byAge (x: { atMs: number, seq: number }, y: { atMs: number, seq: number }): number {
  return x.atMs !== y.atMs ? x.atMs - y.atMs : x.seq - y.seq
}

/** The entries added and not voided: those not replayed yet, and those replayed; each oldest first. */
export function outageOf (lines: Iterable<Line>): Adopted {
  const open = new Map<string, StandInEntry>()
  const replayed = new Map<string, StandInEntry>()
  /** ids voided whole (void lines without seq and atMs), and entries voided by name */
  const voidedIds = new Set<string>()
  const voided = new Set<string>()
  const isVoided = (l: Line): boolean => voidedIds.has(l.id) || voided.has(nameOf(l))
  for (const l of lines) {
    if (l.a === 'add' && l.input !== undefined && !isVoided(l)) {
      open.set(l.id, { id: l.id, seq: l.seq ?? 0, atMs: l.atMs ?? 0, input: l.input })
      replayed.delete(l.id)
    } else if (l.a === 'done') {
      const e = open.get(l.id)
      if (e !== undefined) replayed.set(l.id, e)
      open.delete(l.id)
    } else if (l.a === 'void') {
      // a void may be written before its add line (the add was still queued when the deadline came)
      const whole = l.seq === undefined || l.atMs === undefined
      if (whole) voidedIds.add(l.id)
      else voided.add(nameOf(l))
      for (const m of [open, replayed]) {
        const e = m.get(l.id)
        if (e !== undefined && (whole || nameOf(e) === nameOf(l))) m.delete(l.id)
      }
    }
  }
  return { owed: [...open.values()].sort(byAge), replayed: [...replayed.values()].sort(byAge) }
}

/** The entries added and neither replayed nor voided, oldest first. */
export function pendingOf (lines: Iterable<Line>): StandInEntry[] {
  return outageOf(lines).owed
}

/** A line cut short by a kill was never flushed, so its approval was never answered 00: skipped. */
function readOutage (path: string): Adopted {
  return outageOf(readJournalLines<Line>(path))
}

function addLine (e: StandInEntry): string {
  return JSON.stringify({ a: 'add', ...e }) + '\n'
}

/** In memory: for the embedded store, whose state dies with the process anyway, and for tests. */
export class MemoryStandInJournal implements StandInJournal {
  readonly lines: Line[] = []
  private left: Adopted
  constructor (left: StandInEntry[] = [], replayed: StandInEntry[] = []) { this.left = { owed: left, replayed } }
  async append (entry: StandInEntry): Promise<void> { this.lines.push({ a: 'add', ...structuredClone(entry) }) }
  void (e: EntryName): void { this.lines.push({ a: 'void', id: e.id, seq: e.seq, atMs: e.atMs }) }
  done (id: string): void { this.lines.push({ a: 'done', id }) }
  adopt (): Adopted {
    const l = this.left
    this.left = { owed: [], replayed: [] }
    return l
  }

  endOutage (): void {}
  close (): void {}
}

interface Waiter { text: string, resolve: () => void, reject: (err: Error) => void }

export class FileStandInJournal implements StandInJournal {
  readonly path: string
  private readonly fd: number
  private readonly store: string
  private readonly pattern: RegExp
  private queue: Waiter[] = []
  private flushing = false
  /**
   * Ids appended (from the moment they are queued, not when their flush ends), adopted or left in our file,
   * and not yet done or voided. The file is emptied at the outage's end only when this is empty and nothing
   * is queued or being flushed. Ids, not a count: a void that comes while its add is still being flushed, or
   * a done and a void of one id, each close that id once, and can never close another entry's (which would
   * empty a file still owing an approval).
   */
  private readonly owed = new Set<string>()
  private closed = false
  /** what this process's own file held at start (an earlier process with the same pid) */
  private own: Adopted

  constructor (private readonly dir: string, storeIdentity: string, private readonly pid = process.pid, private readonly io: JournalIo = fileIo) {
    mkdirSync(dir, { recursive: true })
    this.store = storeTag(storeIdentity)
    this.pattern = new RegExp(`^standin-${this.store}-(\\d+)(\\.from-\\d+)?\\.ndjson$`)
    this.path = join(dir, `standin-${this.store}-${pid}.ndjson`)
    this.own = readOutage(this.path)
    this.fd = openSync(this.path, 'a')
    // a last line cut short (no newline) would swallow the next one
    const size = fstatSync(this.fd).size
    if (size > 0) {
      const last = Buffer.alloc(1)
      const rfd = openSync(this.path, 'r')
      try { readSync(rfd, last, 0, 1, size - 1) } finally { closeSync(rfd) }
      if (last[0] !== 0x0a) writeSync(this.fd, '\n')
    }
    for (const e of this.own.owed) this.owed.add(e.id)
  }

  async append (entry: StandInEntry): Promise<void> {
    if (this.closed) throw new Error('stand-in journal closed')
    const text = addLine(entry)
    this.owed.add(entry.id)
    try {
      await new Promise<void>((resolve, reject) => {
        this.queue.push({ text, resolve, reject })
        if (!this.flushing) void this.flush()
      })
    } catch (err) {
      // answered 05: the line may be in the file all the same (written, its flush failed), so it is voided
      // where that can still be written, and a later start never replays it
      if (this.owed.delete(entry.id)) {
        try { writeSync(this.fd, voidLine(entry)) } catch {}
      }
      throw err
    }
  }

  /** Group commit: what was queued while the last flush ran goes in one write and one fdatasync. */
  private async flush (): Promise<void> {
    this.flushing = true
    try {
      while (this.queue.length > 0) {
        const batch = this.queue
        this.queue = []
        try {
          await this.io.write(this.fd, batch.map((w) => w.text).join(''))
          await this.io.fdatasync(this.fd)
          for (const w of batch) w.resolve()
        } catch (err) {
          for (const w of batch) w.reject(err as Error)
        }
      }
    } finally {
      this.flushing = false
    }
  }

  void (e: EntryName): void {
    writeSync(this.fd, voidLine(e))
    fdatasyncSync(this.fd)
    this.owed.delete(e.id)
  }

  done (id: string): void {
    writeSync(this.fd, JSON.stringify({ a: 'done', id }) + '\n')
    this.owed.delete(id)
  }

  /**
   * Empties the file, unless an approval is still owed or a line is being written (then it is kept whole:
   * its replayed entries would count in a later outage's caps, which errs on the safe side).
   */
  endOutage (): void {
    if (this.closed || this.owed.size > 0 || this.queue.length > 0 || this.flushing) return
    ftruncateSync(this.fd, 0)
  }

  adopt (): Adopted {
    const found: Adopted = this.own
    this.own = { owed: [], replayed: [] }
    const ids = new Set([...found.owed, ...found.replayed].map((e) => e.id))
    for (const name of readdirSync(this.dir)) {
      const m = this.pattern.exec(name)
      if (m === null) continue
      const owner = Number(m[1])
      const claimedByUs = owner === this.pid && m[2] !== undefined
      if (!claimedByUs && (owner === this.pid || processAlive(owner))) continue
      // claimed by a rename, so two processes adopting at once never both take it
      const claimed = join(this.dir, `standin-${this.store}-${this.pid}.from-${owner}.ndjson`)
      const from = join(this.dir, name)
      if (from !== claimed) {
        try {
          renameSync(from, claimed)
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue
          throw err
        }
      }
      const theirs = readOutage(claimed)
      const owed = theirs.owed.filter((e) => !ids.has(e.id))
      const replayed = theirs.replayed.filter((e) => !ids.has(e.id))
      if (owed.length + replayed.length > 0) {
        // into our own file before the other is deleted: a kill in between leaves both, and an entry twice is
        // one id; the replayed ones too, so a later start still counts them in this outage's caps
        const text = [...owed.map(addLine), ...replayed.map((e) => addLine(e) + JSON.stringify({ a: 'done', id: e.id }) + '\n')]
        writeSync(this.fd, text.join(''))
        fdatasyncSync(this.fd)
        for (const e of owed) this.owed.add(e.id)
      }
      unlinkSync(claimed)
      for (const e of owed) { ids.add(e.id); found.owed.push(e) }
      for (const e of replayed) { ids.add(e.id); found.replayed.push(e) }
    }
    return { owed: found.owed.sort(byAge), replayed: found.replayed.sort(byAge) }
  }

  close (): void {
    if (this.closed) return
    this.closed = true
    closeSync(this.fd)
  }
}
