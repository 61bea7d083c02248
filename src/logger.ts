// The process logger: pino with secrets, card data and credentials censored.
//
// Redaction paths are costly per line (they are walked on every write, wildcards most of all). The
// decision path logs only named, secret-free fields, so the main logger censors the secret keys at the
// top level and in request headers; code that logs third-party payloads or errors (the outbound adapters)
// takes `redactingChild`, which censors them at any of the first three levels.
import { pino, type Logger, type DestinationStream } from 'pino'
import { REDACT_CENSOR, REDACT_PATHS, SECRET_KEYS } from './redact.js'
import { systemTimers, type Timers } from './timers.js'

const TOP_LEVEL_PATHS = [
  ...SECRET_KEYS.map((k) => /^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`),
  'req.headers.authorization', 'req.headers["x-consumer-custom-id"]', 'headers.authorization', 'headers["x-consumer-custom-id"]'
]

/**
 * What stdout may hold unwritten when whatever reads it falls behind (a stalled log shipper, a full pipe):
 * past it, new lines are dropped, and counted, rather than held until the process runs out of memory.
 * About 50,000 decision lines, several seconds of full load.
 */
export const LOG_BUFFER_BYTES_MAX = 16 * 1024 * 1024
/** a quiet process writes what it holds at least this often */
export const LOG_FLUSH_INTERVAL_MS = 1000

export function createLogger (level: string, stream?: DestinationStream): Logger {
  const opts = { level, base: { service: 'extauth' }, redact: { paths: TOP_LEVEL_PATHS, censor: REDACT_CENSOR } }
  if (stream !== undefined) return pino(opts, stream)
  // stdout through a buffered asynchronous writer: one log line per decision must not cost a syscall each;
  // pino flushes it on exit (SIGTERM, an uncaught error), not on SIGKILL (docs/operations/runbook.md)
  const dest = pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_CHARS, maxLength: LOG_BUFFER_BYTES_MAX })
  handInBatches(dest)
  const log = pino(opts, dest)
  flushAndReportDrops(dest, log)
  return log
}

/** Lines are handed to stdout's writer this many characters at a time (see handInBatches). */
export const LOG_BATCH_CHARS = 4096

/** What handInBatches takes over of a buffered writer (pino.destination's). */
export interface BatchableDestination {
  write: (text: string) => boolean
  flush: (cb?: (err?: Error) => void) => void
  flushSync: () => void
}

/**
 * Hands the writer lines a batch at a time. It adds each string it is given to the last one it holds and asks
 * that one's UTF-8 length each time, which copies all it holds flat again: given line by line, a decision line
 * cost some 2 KB copied. Lines wait here as they waited there (until LOG_BATCH_CHARS, its minLength), and
 * its flushes, the exit's included (pino calls the writer's flushSync), hand over what is waiting first.
 */
export function handInBatches (dest: BatchableDestination): void {
  const write = dest.write.bind(dest)
  const flush = dest.flush.bind(dest)
  const flushSync = dest.flushSync.bind(dest)
  let waiting: string[] = []
  let chars = 0
  const handOver = (): boolean => {
    const text = waiting.length === 1 ? waiting[0] as string : waiting.join('')
    waiting = []
    chars = 0
    return write(text)
  }
  dest.write = (line) => {
    waiting.push(line)
    chars += line.length
    return chars >= LOG_BATCH_CHARS ? handOver() : true
  }
  dest.flush = (cb) => {
    if (waiting.length > 0) handOver()
    flush(cb)
  }
  dest.flushSync = () => {
    if (waiting.length > 0) handOver()
    flushSync()
  }
}

/** The lines in what the writer dropped: a batch of them at a time (handInBatches). */
function linesIn (dropped: unknown): number {
  if (typeof dropped !== 'string') return 1
  let n = 0
  for (let at = dropped.indexOf('\n'); at >= 0; at = dropped.indexOf('\n', at + 1)) n++
  return Math.max(n, 1)
}

export interface BufferedDestination {
  flush: () => void
  /** 'drop': a line did not fit in the buffer and was dropped */
  on: (event: 'drop', fn: (dropped: unknown) => void) => unknown
}

/**
 * A quiet process must not hold its lines (extauth ready, Redis unreachable, shutting down) until 4 KiB more
 * arrive, nor lose more than a second of them to a SIGKILL: flush at least every LOG_FLUSH_INTERVAL_MS. Lines
 * dropped while the buffer was full are counted, and reported on the next flush.
 */
export function flushAndReportDrops (dest: BufferedDestination, log: Logger, timers: Timers = systemTimers): void {
  let dropped = 0
  dest.on('drop', (text) => { dropped += linesIn(text) })
  const schedule = (): void => {
    const t = timers.setTimeout(tick, LOG_FLUSH_INTERVAL_MS)
    // never what keeps the process alive
    if (typeof t === 'object' && t !== null && 'unref' in t) (t as NodeJS.Timeout).unref()
  }
  const tick = (): void => {
    try { dest.flush() } catch {}
    if (dropped > 0) {
      const n = dropped
      dropped = 0
      log.error({ dropped: n, bufferBytesMax: LOG_BUFFER_BYTES_MAX }, 'log lines dropped: stdout was not read fast enough')
    }
    schedule()
  }
  schedule()
}

/**
 * The decision line's logger: the same stream and level, without the redaction walk. Only for lines made of
 * named fields that hold no secret (reference, urn, codes, rule ids, latency), never a payload or an error.
 */
export function unredacted (log: Logger): Logger {
  return log.child({}, { redact: [] })
}

/** A child logger that censors the secret keys down to three levels deep, for third-party payloads. */
export function redactingChild (log: Logger, bindings: Record<string, unknown>): Logger {
  return log.child(bindings, { redact: { paths: [...REDACT_PATHS], censor: REDACT_CENSOR } })
}

/**
 * Resolves once every line the logger holds is written. The last line of a stopping process is logged after
 * it, so that line's time is when the process exits: what is left to write at exit is that one line, not
 * seconds of buffered ones a slow reader takes in (docs/operations/runbook.md, Stopping).
 */
export async function logWritten (log: Logger): Promise<void> {
  await new Promise<void>((resolve) => { log.flush(() => { resolve() }) })
}
