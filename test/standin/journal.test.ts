// The stand-in journal on disk: an approval is in the file before append resolves; the file of a process
// that is gone is adopted once (also by two processes at once); a line cut short by a kill is skipped and
// never swallows the next; a void (the deadline answered 05 first) keeps an entry from replay even when it
// is written before its add line; replayed entries stay in the file (for the caps) until the outage's end,
// when it is emptied if nothing is owed, and never while an approval is owed, however a void, a done and a
// flush that fails interleave.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { entryId, FileStandInJournal, fileIo, pendingOf, type JournalIo, type StandInEntry } from '../../src/standin/journal.js'
import { authInput } from '../store/contract.js'
import { tempDir } from './helpers.js'

const STORE = 'redis://127.0.0.1:6379|test:'

function entry (ref: string, atMs = Date.now(), seq = 1): StandInEntry {
  const input = { ...authInput('UJ1', { reference: ref }), standIn: true as const }
  return { id: entryId('UJ1', ref), seq, atMs, input }
}

/** a pid no process has now: one that has exited */
function deadPid (): number {
  return spawnSync(process.execPath, ['-e', '']).pid as number
}

function lines (path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '')
}

t.test('append resolves with the line in the file; the outage\'s end empties it once nothing is owed', async (t) => {
  const dir = tempDir(t)
  const j = new FileStandInJournal(dir, STORE)
  t.teardown(() => { j.close() })
  const many = Array.from({ length: 50 }, (_, i) => entry(`R${i}`, 1000 + i, i))
  await Promise.all(many.map(async (e) => { await j.append(e) }))
  t.equal(lines(j.path).length, 50, 'fifty appends at once: every line written (one write and one flush per batch)')
  t.same(pendingOf(lines(j.path).map((l) => JSON.parse(l) as never)).map((e) => e.id), many.map((e) => e.id), 'read back oldest first')
  for (const e of many.slice(0, 49)) j.done(e.id)
  t.equal(lines(j.path).length, 99, 'done lines appended while one is still owed')
  j.endOutage()
  t.equal(lines(j.path).length, 99, 'one still owed: kept whole')
  j.done(many[49]!.id)
  t.equal(lines(j.path).length, 100, 'nothing owed: the replayed entries are kept until the outage is over')
  j.endOutage()
  t.equal(readFileSync(j.path, 'utf8'), '', 'the outage over: emptied')
})

t.test('the journal of a process that is gone is adopted once, oldest first; a torn last line is skipped', async (t) => {
  const dir = tempDir(t)
  const gone = deadPid()
  const theirs = new FileStandInJournal(dir, STORE, gone)
  await theirs.append(entry('B', 2000))
  await theirs.append(entry('A', 1000))
  await theirs.append(entry('C', 3000))
  theirs.done(entryId('UJ1', 'C'))
  theirs.close()
  // killed in the middle of writing D: its approval was never answered
  appendFileSync(theirs.path, JSON.stringify({ a: 'add', ...entry('D', 4000) }).slice(0, 40))

  const a = new FileStandInJournal(dir, STORE, process.pid)
  const b = new FileStandInJournal(dir, 'another program|p:', process.pid)
  t.teardown(() => { a.close(); b.close() })
  t.same(b.adopt(), { owed: [], replayed: [] }, 'another store\'s journal is not ours')
  const { owed: adopted, replayed } = a.adopt()
  t.same(adopted.map((e) => e.input.reference), ['A', 'B'], 'A and B, oldest first; C was replayed, D never flushed')
  t.same(replayed.map((e) => e.input.reference), ['C'], 'C replayed in this outage: for the caps')
  t.same(a.adopt(), { owed: [], replayed: [] }, 'adopted once')
  t.same(readdirSync(dir).sort(), [basename(a.path), basename(b.path)].sort(), 'their file is gone')
  t.same(pendingOf(lines(a.path).map((l) => JSON.parse(l) as never)).map((e) => e.input.reference), ['A', 'B'], 'now in our file, before theirs was deleted')
})

t.test('two processes adopting at once: each entry goes to one of them', async (t) => {
  const dir = tempDir(t)
  const theirs = new FileStandInJournal(dir, STORE, deadPid())
  await theirs.append(entry('X'))
  theirs.close()
  const a = new FileStandInJournal(dir, STORE, process.pid)
  const b = new FileStandInJournal(dir, STORE, process.ppid)
  t.teardown(() => { a.close(); b.close() })
  const got = [...a.adopt().owed, ...b.adopt().owed]
  t.same(got.map((e) => e.input.reference), ['X'])
})

t.test('the same pid again (a container restarted): its own file is adopted, and a torn last line swallows nothing', async (t) => {
  const dir = tempDir(t)
  const pid = deadPid()
  const first = new FileStandInJournal(dir, STORE, pid)
  await first.append(entry('A', 1000))
  first.close()
  appendFileSync(first.path, '{"a":"add","id":"[\\"UJ1\\",\\"T')
  const second = new FileStandInJournal(dir, STORE, pid)
  t.teardown(() => { second.close() })
  t.same(second.adopt().owed.map((e) => e.input.reference), ['A'])
  await second.append(entry('B', 2000))
  const third = new FileStandInJournal(dir, STORE, deadPid())
  t.teardown(() => { third.close() })
  second.close()
  // read as the next start would
  t.same(pendingOf(lines(second.path).flatMap((l) => { try { return [JSON.parse(l) as never] } catch { return [] } })).map((e) => e.input.reference), ['A', 'B'], 'B on a line of its own')
})

t.test('a void keeps an entry from replay, whichever line comes first', async (t) => {
  const voidFirst = pendingOf([{ a: 'void', id: 'x' }, { a: 'add', id: 'x', seq: 1, atMs: 1, input: entry('x').input }])
  t.same(voidFirst, [])
  const addFirst = pendingOf([{ a: 'add', id: 'x', seq: 1, atMs: 1, input: entry('x').input }, { a: 'void', id: 'x' }])
  t.same(addFirst, [])
  const dir = tempDir(t)
  const j = new FileStandInJournal(dir, STORE)
  t.teardown(() => { j.close() })
  const e = entry('V')
  const p = j.append(e)
  j.void(e)
  await p
  t.same(pendingOf(lines(j.path).map((l) => JSON.parse(l) as never)), [], 'voided while its add was being written: not owed')
  writeFileSync(j.path, '')
})

/**
 * The file system's writes, with the next flush held when `hold` is called: `entered` resolves once that
 * flush has started (its add line written), and `settle` lets it finish or fail.
 */
function heldIo (): JournalIo & { hold: () => { entered: Promise<void>, settle: (err?: Error) => void } } {
  let held: { enter: () => void, gate: Promise<void> } | null = null
  return {
    write: fileIo.write,
    fdatasync: async (fd) => {
      const h = held
      held = null
      if (h !== null) { h.enter(); await h.gate }
      await fileIo.fdatasync(fd)
    },
    hold () {
      let enter = (): void => {}
      let settle = (_err?: Error): void => {}
      const entered = new Promise<void>((resolve) => { enter = resolve })
      const gate = new Promise<void>((resolve, reject) => { settle = (err) => { if (err === undefined) resolve(); else reject(err) } })
      held = { enter, gate }
      return { entered, settle }
    }
  }
}

/** what the next process with this pid would replay */
function owedAfterRestart (dir: string, pid: number): string[] {
  const next = new FileStandInJournal(dir, STORE, pid)
  try { return next.adopt().owed.map((e) => e.input.reference) } finally { next.close() }
}

/** A journal with A flushed and B's add being flushed (held): B's flush is the test's to settle. */
async function bHeldInFlush (t: Parameters<typeof tempDir>[0]): Promise<{ dir: string, pid: number, j: FileStandInJournal, flush: ReturnType<ReturnType<typeof heldIo>['hold']>, b: Promise<void> }> {
  const dir = tempDir(t)
  const pid = deadPid()
  const io = heldIo()
  const j = new FileStandInJournal(dir, STORE, pid, io)
  await j.append(entry('A', 1000, 1))
  const flush = io.hold()
  const b = j.append(entry('B', 2000, 2))
  await flush.entered
  return { dir, pid, j, flush, b }
}

t.test('a void while its add is being flushed, and the flush then fails: the approval owed before is kept', async (t) => {
  const { dir, pid, j, flush, b } = await bHeldInFlush(t)
  j.void(entry('B', 2000, 2))
  flush.settle(new Error('EIO'))
  await t.rejects(b, { message: 'EIO' })
  await j.append(entry('C', 3000, 3))
  j.done(entryId('UJ1', 'C'))
  j.close()
  t.same(owedAfterRestart(dir, pid), ['A'], 'A was answered 00 and not replayed: still in the file')
})

t.test('a void while its add is being flushed: the file is emptied at the outage\'s end once nothing else is owed', async (t) => {
  const dir = tempDir(t)
  const pid = deadPid()
  const io = heldIo()
  const j = new FileStandInJournal(dir, STORE, pid, io)
  t.teardown(() => { j.close() })
  const flush = io.hold()
  const a = j.append(entry('A', 1000, 1))
  await flush.entered
  j.void(entry('A', 1000, 1))
  j.endOutage()
  t.not(readFileSync(j.path, 'utf8'), '', 'A\'s line still being flushed: kept')
  flush.settle()
  await a
  j.endOutage()
  t.equal(readFileSync(j.path, 'utf8'), '', 'A voided and its flush over: nothing owed, emptied')
  await j.append(entry('B', 2000, 2))
  t.same(owedAfterRestart(dir, pid), ['B'])
  j.done(entryId('UJ1', 'B'))
  j.endOutage()
  t.equal(readFileSync(j.path, 'utf8'), '', 'B replayed: nothing owed, emptied')
})

t.test('a done and then a void of one entry (a replay and a deadline at once) close that entry only', async (t) => {
  const dir = tempDir(t)
  const pid = deadPid()
  const j = new FileStandInJournal(dir, STORE, pid)
  await j.append(entry('A', 1000, 1))
  await j.append(entry('B', 2000, 2))
  j.done(entryId('UJ1', 'B'))
  j.void(entry('B', 2000, 2))
  j.close()
  t.same(owedAfterRestart(dir, pid), ['A'])
})

t.test('an append whose flush fails is answered 05 and never replayed, though its line was written', async (t) => {
  const { dir, pid, j, flush, b } = await bHeldInFlush(t)
  flush.settle(new Error('EIO'))
  await t.rejects(b, { message: 'EIO' })
  j.close()
  t.ok(readFileSync(j.path, 'utf8').includes('"B"'), 'B\'s add line is in the file')
  t.same(owedAfterRestart(dir, pid), ['A'])
})

t.test('a card number, CVD2 or expiry sent beside the request never reaches the journal', async (t) => {
  const { Registry } = await import('prom-client')
  const { decide } = await import('../../src/decision/pipeline.js')
  const { InFlight } = await import('../../src/decision/deadline.js')
  const { compileRuleFiles } = await import('../../src/rules/load.js')
  const { StandIn } = await import('../../src/standin/stand-in.js')
  const { standInMetrics } = await import('../../src/standin/metrics.js')
  const { parsePolicy } = await import('../../src/standin/policy.js')
  const { MemoryStore } = await import('../../src/store/memory.js')
  const { createLogger } = await import('../../src/logger.js')
  const { authBody } = await import('../helpers/config.js')
  const { POLICY, switchedStore } = await import('./helpers.js')
  const dir = tempDir(t)
  const journal = new FileStandInJournal(dir, STORE)
  const sw = switchedStore(new MemoryStore())
  sw.set('down')
  const standIn = new StandIn({ policy: parsePolicy(POLICY), journal, store: sw.store, log: createLogger('silent'), metrics: standInMetrics(new Registry()), replayEveryMs: 3_600_000 })
  t.teardown(async () => { await standIn.stop() })
  const rules = compileRuleFiles([], { timezone: 'UTC' })
  if (!rules.ok) throw new Error('rules')
  const secrets = { pan: '4111111111111111', cvd2: '737', expDate: '122030', otp: '918273' }
  const body = authBody({ urn: 'USEC1', transactionAmount: '100', ...secrets }) as never
  const now = Date.now()
  const d = await decide(body, { arrivedAtMs: now, deadlineAtMs: now + 2000, abort: new InFlight(now + 2000) }, { store: sw.store, rules: () => rules.set, timezone: 'UTC', standIn })
  t.match(d, { code: '00', standIn: true })
  const text = readFileSync(journal.path, 'utf8')
  t.ok(text.includes('USEC1'), 'the approval is in the journal')
  // every key and value of every line: a three-digit CVD2 may stand inside a time or a hash by chance, a field never
  const seen: Array<[string, unknown]> = []
  const walk = (v: unknown, key: string): void => {
    if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k)
    else seen.push([key, v])
  }
  for (const line of text.split('\n').filter((l) => l !== '')) walk(JSON.parse(line), '')
  t.ok(seen.length > 10, `the lines read (${seen.length} values)`)
  for (const [k, v] of Object.entries(secrets)) {
    t.notOk(seen.some(([key, value]) => key === k || value === v || (typeof value === 'string' && v.length >= 6 && value.includes(v))), `no ${k}`)
  }
})

t.test('a void names its entry: a later entry of the same reference (decided again) is not voided by it', async (t) => {
  const first = entry('R', 1000, 1)
  const later = entry('R', 5000, 7)
  // the first attempt answered 05 on the deadline, the repeat decided again in stand-in and answered 00
  const lines = [{ a: 'add' as const, ...first }, { a: 'void' as const, id: first.id, seq: 1, atMs: 1000 }, { a: 'add' as const, ...later }]
  t.same(pendingOf(lines).map((e) => e.seq), [7], 'the later entry is owed')
  // its void written before its add (the add still queued): still voided, and still only that entry
  t.same(pendingOf([{ a: 'void', id: first.id, seq: 1, atMs: 1000 }, { a: 'add', ...first }, { a: 'add', ...later }]).map((e) => e.seq), [7])
  // a void line without seq and atMs (written before voids named their entry) voids every entry of its id
  t.same(pendingOf([{ a: 'void', id: first.id }, { a: 'add', ...later }]), [])
  // through the file, as a restart reads it
  const dir = tempDir(t)
  const j = new FileStandInJournal(dir, STORE)
  await j.append(first)
  j.void(first)
  await j.append(later)
  j.close()
  const again = new FileStandInJournal(dir, STORE)
  t.teardown(() => { again.close() })
  t.same(again.adopt().owed.map((e) => e.seq), [7], 'a restart replays the later entry')
})
