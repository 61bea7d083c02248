// The decision journal over both stores: records readable as JournalEntry with their explanation, a time
// range oldest first, the newest-first search paged without duplicates or gaps, lookup by reference alone.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryStore } from '../../src/store/memory.js'
import type { RedisStore } from '../../src/store/redis.js'
import { MemoryJournal, RedisJournal, type JournalReader } from '../../src/journal/source.js'
import { sharedRedisStore, SHARED_REDIS_URL } from '../helpers/redis.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../../src/cli/main.js'
import { authInput, limit } from '../store/contract.js'
import type { JournalEntry } from '../../src/domain/journal.js'

const T0 = Date.parse('2026-03-01T10:00:00.000Z')

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: the journal`, async (t) => {
    const store: MemoryStore | RedisStore = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const journal: JournalReader = store instanceof MemoryStore ? new MemoryJournal(store) : new RedisJournal(store.client, store.keys.prefix)
    const urns = Array.from({ length: 5 }, () => `J${randomUUID().slice(0, 10)}`)
    for (const u of urns) {
      await store.putCustomer(u, {})
      await store.putCard(u, '4321', 'ACTIVE')
      await store.credit(u, 1000, 'seed')
    }
    // 25 decisions, one a minute, customers interleaved; the same reference used by two customers
    const made: Array<{ urn: string, reference: string, at: number }> = []
    for (let i = 0; i < 25; i++) {
      const urn = urns[i % 5] as string
      const reference = i === 7 || i === 8 ? 'SHARED-REF' : `R${i}`
      const at = T0 + i * 60_000
      await store.authorize(authInput(urn, { reference, nowMs: at, deadlineAtMs: Date.now() + 5000, debitAmount: 100 }))
      made.push({ urn, reference, at })
    }
    // a count limit of 2: two approvals, then the decline that saw them
    for (const [i, reference] of ['L1', 'L2', 'LIM'].entries()) {
      await store.authorize(authInput(urns[0] as string, { reference, nowMs: T0 + (30 + i) * 60_000, deadlineAtMs: Date.now() + 5000, limits: [limit({ max: 2, windowStartMs: 0, retainMs: 400 * 24 * 3600_000 })] }))
    }
    const poor = await store.authorize(authInput(urns[1] as string, { reference: 'POOR', nowMs: T0 + 40 * 60_000, deadlineAtMs: Date.now() + 5000, debitAmount: 999_999 }))
    t.equal(poor.code, '51')

    const all: JournalEntry[] = []
    for await (const e of journal.read(T0, T0 + 25 * 60_000)) all.push(e)
    t.same(all.map((e) => `${e.urn}/${e.reference}`), made.map((m) => `${m.urn}/${m.reference}`), 'the range, oldest first, nothing else')
    t.match(all[0], { v: 1, last4: '4321', code: '00', reason: 'approved', debit: 100, rulesVersion: 'v1', customerStatus: 'ACTIVE', cardStatus: 'ACTIVE', answeredOnDeadline: false, availableSeen: null })
    t.equal(all[0]?.arrivedAt, new Date(T0).toISOString())

    const [lim] = await journal.byReference('LIM')
    t.match(lim, { code: '65', reason: 'limit', ruleId: 'lim', limit: { ruleId: 'lim', usedBefore: 2, max: 2 } }, 'a limit decline keeps the window use it saw and its max')
    const [poorEntry] = await journal.byReference('POOR')
    t.match(poorEntry, { code: '51', reason: 'insufficient_funds', availableSeen: 500, debit: 999_999 })
    const shared = await journal.byReference('SHARED-REF')
    t.same(shared.map((e) => e.urn).sort(), [urns[2], urns[3]].sort(), 'every customer\'s decision with the reference')
    t.same(await journal.byReference('NONE'), [])

    // newest first, pages of 4: together exactly the list, no duplicates, no gaps
    const seen: string[] = []
    let cursor: string | undefined
    for (let pages = 0; pages < 20; pages++) {
      const page = await journal.search({ limit: 4, toMs: T0 + 25 * 60_000, ...(cursor !== undefined ? { cursor } : {}) })
      seen.push(...page.items.map((e) => `${e.urn}/${e.reference}`))
      if (page.nextCursor === null) break
      cursor = page.nextCursor
    }
    t.same(seen, made.map((m) => `${m.urn}/${m.reference}`).reverse(), 'paged newest first')
    const one = await journal.search({ limit: 100, urn: urns[1] as string, code: '51' })
    t.same(one.items.map((e) => e.reference), ['POOR'], 'filtered by urn and code')
    const byRule = await journal.search({ limit: 100, rule: 'lim', reason: 'limit' })
    t.same(byRule.items.map((e) => e.reference), ['LIM'])
    const bytes = Buffer.byteLength(JSON.stringify(all[0]))
    t.comment(`journal entry ${bytes} bytes as JSON`)
  })
}

t.test('extauth decisions export writes NDJSON journal entries, oldest first', async (t) => {
  const store = await sharedRedisStore(t)
  const urn = `J${randomUUID().slice(0, 10)}`
  await store.putCustomer(urn, {})
  await store.credit(urn, 1000, 'seed')
  for (let i = 0; i < 3; i++) await store.authorize(authInput(urn, { reference: `E${i}`, nowMs: T0 + i * 1000, deadlineAtMs: Date.now() + 5000 }))
  const dir = await mkdtemp(join(tmpdir(), 'extauth-export-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const file = join(dir, 'out.ndjson')
  const errs: string[] = []
  const code = await main(['decisions', 'export', '--from', new Date(T0).toISOString(), '--to', new Date(T0 + 2000).toISOString(), '--out', file],
    { out: () => {}, err: (l) => errs.push(l), env: { REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: store.keys.prefix } })
  t.equal(code, 0, errs.join('\n'))
  const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as JournalEntry)
  t.same(lines.map((e) => e.reference), ['E0', 'E1'], '[from, to)')
  t.match(errs.at(-1), /exported 2 decision/)
  t.equal(await main(['decisions', 'export', '--from', 'yesterday'], { out: () => {}, err: () => {}, env: {} }), 2, 'wrong usage')
})
