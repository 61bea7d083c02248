// Statement import: the whole file checked first with line numbers (nothing applied on a bad line), each
// posting applied once across re-imports, overlapping statements and an import stopped part way; CSV maps.
import t from 'tap'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import { importStatement } from '../../src/settlement/import.js'
import { minorUnits } from '../../src/settlement/statement-reader.js'
import type { StatementMap } from '../../src/settlement/statement-maps.js'
import { POSTING_HORIZON_MS, type SettlementStore } from '../../src/settlement/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { authInput, funded } from '../store/contract.js'
import { DAY, NEXT } from '../helpers/posting-day.js'

const dir = await mkdtemp(join(tmpdir(), 'extauth-import-'))
let files = 0
async function file (lines: unknown[]): Promise<string> {
  const path = join(dir, `s${++files}.ndjson`)
  await writeFile(path, lines.map((l) => typeof l === 'string' ? l : JSON.stringify(l)).join('\n') + '\n')
  return path
}
const head = (id: string, complete = true): unknown => ({ statement: { id, from: `${DAY}T00:00:00Z`, to: `${NEXT}T00:00:00Z`, complete } })
const line = (platformId: string, urn: string, type: string, reference: string, amount: string): unknown =>
  ({ platformId, type, reference, urn, last4: '4321', amount, currency: '356', postedAt: `${DAY}T10:00:00Z` })

async function available (store: Store, urn: string): Promise<number> {
  return (await store.getCustomer(urn))?.available ?? NaN
}

const stores: Array<[string, (tt: { teardown: (fn: () => unknown) => void }) => Promise<Store>]> = [['memory', async () => new MemoryStore()], ['redis', async (tt) => await sharedRedisStore(tt)]]
for (const [name, make] of stores) {
  t.test(`${name}: a bad line anywhere: each named with its line, nothing applied`, async (t) => {
    const store = await make(t)
    const settlement = settlementFor(store)
    const urn = await funded(store, 1000)
    const f = await file([head('S-bad'), line('P1', urn, 'fee', 'F1', '10'), line('P2', urn, 'fee', 'F2', '1.5'), '{not json', line('P1', urn, 'fee', 'F3', '10'), line('P4', urn, 'gift', 'F4', '10')])
    const r = await importStatement({ store, settlement, file: f })
    t.equal(r.ok, false)
    if (r.ok) return
    t.same(r.errors.map((e) => e.line), [3, 4, 5, 6])
    t.match(r.errors[0]?.error, /amount/)
    t.match(r.errors[2]?.error, /twice/)
    t.equal(await available(store, urn), 1000, 'nothing applied')
    t.equal(await settlement.getStatement('S-bad'), null)
  })

  t.test(`${name}: a line posted longer ago than an applied posting's record is surely kept: refused, naming it, nothing applied`, async (t) => {
    const store = await make(t)
    const settlement = settlementFor(store)
    const urn = await funded(store, 1000)
    const now = Date.now()
    const at = (ms: number): string => new Date(now - ms).toISOString()
    const fresh = { ...(line('H1', urn, 'fee', 'H1', '10') as object), postedAt: at(POSTING_HORIZON_MS - 60_000) }
    const old = { ...(line('H2', urn, 'refund', 'H2', '500') as object), postedAt: at(POSTING_HORIZON_MS) }
    t.equal(POSTING_HORIZON_MS, 44 * 86_400_000, 'a day within the 45 days a posting\'s record is kept')
    const r = await importStatement({ store, settlement, file: await file([head('S-old'), fresh, old]), clock: () => now })
    t.equal(r.ok, false)
    if (r.ok) return
    t.same(r.errors.map((e) => e.line), [3], 'the old line named')
    t.match(r.errors[0]?.error, /44 days ago or more.*kept 45 days.*applied and forgotten/)
    t.equal(await available(store, urn), 1000, 'nothing applied')
    t.equal(await settlement.getStatement('S-old'), null)
    const ok = await importStatement({ store, settlement, file: await file([head('S-fresh'), fresh]), clock: () => now })
    t.equal(ok.ok, true, 'a line just inside the horizon is imported')
    t.equal(await available(store, urn), 990)
  })

  t.test(`${name}: imported twice, overlapping, stopped part way: each posting applied once`, async (t) => {
    const store = await make(t)
    const settlement = settlementFor(store)
    const urn = await funded(store, 100_000)
    const approved = authInput(urn, { debitAmount: 2000, fingerprint: 'a', holdExpiresAtMs: Date.now() + 3_600_000 })
    t.equal((await store.authorize(approved)).code, '00')
    const lines = [head('S-1'), line('C1', urn, 'purchase', approved.reference, '2000')]
    for (let i = 0; i < 40; i++) lines.push(line(`F${i}`, urn, 'fee', `FEE${i}`, '10'))
    const f = await file(lines)
    // stopped after 13 postings, as a process killed part way
    let n = 0
    const dying: SettlementStore = Object.create(settlement) as SettlementStore
    dying.applyPosting = async (...args) => {
      if (++n > 13) throw new Error('killed')
      return await settlement.applyPosting(...args)
    }
    await t.rejects(importStatement({ store, settlement: dying, file: f, inFlightMax: 1 }), /killed/)
    t.equal(await available(store, urn), 100_000 - 2000 - 12 * 10)
    const r = await importStatement({ store, settlement, file: f })
    t.equal(r.ok, true)
    if (!r.ok) return
    t.equal(r.report.applied, 41, 'the second run finishes the job; what the first applied counts as this statement\'s')
    t.same(r.report.outcomes.fee, { count: 40, amount: '400' })
    t.same(r.report.outcomes.cleared, { count: 1, amount: '2000' })
    const after = 100_000 - 2000 - 400
    t.equal(await available(store, urn), after)
    const again = await importStatement({ store, settlement, file: f })
    t.equal(again.ok && again.report.applied, 41)
    t.equal(await available(store, urn), after, 'the same statement again changes nothing')
    const overlap = await file([head('S-2'), line('F39', urn, 'fee', 'FEE39', '10'), line('F40', urn, 'fee', 'FEE40', '10')])
    const o = await importStatement({ store, settlement, file: overlap })
    t.equal(o.ok && o.report.duplicates, 1)
    t.equal(o.ok && o.report.applied, 1)
    t.equal(await available(store, urn), after - 10, 'an overlapping statement applies only what is new')
    t.same((await settlement.getStatement('S-2'))?.outcomes, { fee: { count: 1, amount: '10' } })
  })
}

t.test('a CSV through a named map: columns, type words, decimal amounts', async (t) => {
  const store = new MemoryStore()
  const settlement = settlementFor(store)
  const urn = await funded(store, 10_000)
  const map: StatementMap = {
    format: 'csv',
    delimiter: ';',
    columns: { platformId: 'Txn ID', type: 'Kind', reference: 'Ref', urn: 'Account', amount: 'Amount', postedAt: 'Posted' },
    types: { CHARGE: 'fee', CREDIT: 'adjustment' },
    decimals: 2,
    currency: '356'
  }
  const path = join(dir, 'bank.csv')
  await writeFile(path, `Txn ID;Kind;Ref;Account;Amount;Posted\nX1;CHARGE;M1;${urn};12.50;${DAY}T09:00:00Z\nX2;CREDIT;M2;${urn};"3";${DAY}T11:00:00Z\n`)
  const r = await importStatement({ store, settlement, file: path, map, header: { id: 'bank-20261120' } })
  t.equal(r.ok, true)
  if (!r.ok) return
  t.equal(r.report.from, `${DAY}T09:00:00Z`)
  t.equal(r.report.complete, false)
  t.equal(await available(store, urn), 10_000 - 1250 + 300)
  await writeFile(path, `Txn ID;Kind;Ref;Account;Amount;Posted\nX3;CHARGE;M1;${urn};12.505;${DAY}T09:00:00Z\nX4;REFUND;M2;${urn};3;${DAY}T11:00:00Z\n`)
  const bad = await importStatement({ store, settlement, file: path, map, header: { id: 'bank-2' } })
  t.same(bad.ok ? [] : bad.errors.map((e) => e.line), [2, 3])
})

t.test('amounts with decimals are read exactly', async (t) => {
  t.equal(minorUnits('12.50', 2), 1250)
  t.equal(minorUnits('0.07', 2), 7)
  t.equal(minorUnits('19.99', 2), 1999)
  t.equal(minorUnits('1', 3), 1000)
  t.equal(minorUnits('1.234', 2), null)
  t.equal(minorUnits('-1', 2), null)
  t.equal(minorUnits('1e3', 0), null)
})

for (const [name, make] of stores) {
  t.test(`${name}: approved_not_posted: a final approval of a complete period on no statement is an exception; a hold is left to expiry`, async (t) => {
    const store = await make(t)
    const settlement = settlementFor(store)
    const urn = await funded(store, 10_000)
    const lost = authInput(urn, { debitAmount: 700, fingerprint: 'a' })
    const posted = authInput(urn, { debitAmount: 300, fingerprint: 'b' })
    const held = authInput(urn, { debitAmount: 100, fingerprint: 'c', holdExpiresAtMs: Date.now() + 3_600_000 })
    for (const i of [lost, posted, held]) t.equal((await store.authorize(i)).code, '00')
    const from = new Date(Date.now() - 3_600_000).toISOString()
    const to = new Date(Date.now() + 3_600_000).toISOString()
    const f = await file([{ statement: { id: `S-anp-${name}`, from, to, complete: true } }, line(`PA-${name}-${urn}`, urn, 'purchase', posted.reference, '300')])
    const r = await importStatement({ store, settlement, file: f, graceMs: 0 })
    t.equal(r.ok, true)
    if (!r.ok) return
    t.same(r.report.outcomes.approved_not_posted, { count: 1, amount: '700' })
    const open = await settlement.listExceptions({ urn, status: 'open', limit: 10 })
    t.equal(open.items.length, 1)
    t.match(open.items[0], { kind: 'approved_not_posted', reference: lost.reference, amount: '700', accept: { action: 'release', amount: '700' } })
    const again = await importStatement({ store, settlement, file: f, graceMs: 0 })
    t.equal(again.ok && again.report.outcomes.approved_not_posted, undefined, 'once')
    const { resolveException } = await import('../../src/settlement/resolve.js')
    await resolveException(store, settlement, open.items[0]?.id as string, { action: 'accept', reason: 'the platform never posted it' }, 'k')
    t.equal(await available(store, urn), 10_000 - 300 - 100, 'released; the hold stays held')
  })
}
