// `npm run demo`'s close of the day, in SETTLEMENT_MODE=holds: a second cardholder's purchases, what the platform
// does downstream of each approval (a clearing in full, in part and for more, a cancel after the 00, one that
// never completes, a refund, a force post, a fee; every other approval of the day cleared in full), then the
// platform's statement of the day (the prepaid simulator's GET /__sim/statement) imported through
// POST /admin/v1/statements, its report, the one exception resolved with a reason, and each customer's balance
// here held against the platform's books (GET /__sim/books): ledger equal to the platform's balance, held equal
// to what the platform's approvals still hold.
import { request } from 'undici'
import type { AuthRequest } from '../../src/domain/request.js'
import type { PurchaseBook } from '../../src/sim/purchase-book.js'
import type { WalletBook } from '../../src/sim/wallet-book.js'

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH'

export interface DayDeps {
  say: (s: string) => void
  /** an admin call: anything but a 2xx stops the demo, naming the answer */
  call: (method: Method, path: string, body?: unknown) => Promise<Record<string, unknown>>
  /** a statement file sent as the body of POST /admin/v1/statements */
  importStatement: (ndjson: string) => Promise<Record<string, unknown>>
  /** a payment sent by the platform and booked by it; answers the code */
  spend: (what: string, over: Partial<AuthRequest>) => Promise<{ code: string, body: AuthRequest }>
  /** the prepaid simulator's base URL (its statement and books routes) */
  prepaidUrl: string
  purchases: PurchaseBook
  wallets: WalletBook
  /** the day's start: the statement's period begins here */
  dayStartMs: number
  /** made-up references unique to the run */
  run: string
  /** a fault planted for the test: the platform's refund left off the statement it sends */
  plant?: 'drop-refund-line'
}

export interface BookRow { urn: string, ledger: string, held: string, platformBalance: string, platformHeld: string, agree: boolean }

export interface DayResult {
  statementId: string
  report: Record<string, unknown>
  /** the exceptions opened by the statement, by kind and reference, before any was resolved */
  opened: Array<{ id: string, kind: string, reference: string }>
  /** the exceptions resolved in the day */
  resolved: Array<{ id: string, kind: string, reference: string, action: string, reason: string }>
  /** open exceptions left at the end */
  stillOpen: number
  books: BookRow[]
  agree: boolean
  /** the approval that never completed, and the force post */
  neverCompleted: string
  forcePost: string
}

const money = (minor: string | number): string => (Number(minor) / 100).toFixed(2)

export async function closeDay (d: DayDeps): Promise<DayResult> {
  const { say, call, purchases } = d
  const urn = 'DEMO000002'
  const last4 = '2222'
  const opening = 1_000_000
  say('7. the day closes (SETTLEMENT_MODE=holds: each 00 is a hold until the platform\'s statement clears it)')
  say(`   a second cardholder ${urn}, card ${last4}, opens with ${money(opening)} on both books`)
  await call('PUT', `/admin/v1/customers/${urn}`, { customerId: 'DEMO-CUST-2' })
  await call('PUT', `/admin/v1/customers/${urn}/cards/${last4}`, { status: 'ACTIVE' })
  await call('POST', `/admin/v1/customers/${urn}/credits`, { amount: String(opening), reference: `OPEN${d.run}` })
  d.wallets.add({ urn, customerId: 'DEMO-CUST-2', accountNumber: 'DEMO-WALLET-2', balance: opening })

  const card = { urn, last4Digits: last4 }
  const buy = async (what: string, amount: number, over: Partial<AuthRequest> = {}): Promise<string> => {
    const r = await d.spend(what, { ...card, transactionAmount: String(amount), ...over })
    if (r.code !== '00') throw new Error(`${what}: expected 00, got ${r.code}`)
    return r.body.transactionReferenceNumber
  }
  const groceries = await buy('groceries, POS', 125_000)
  const hotel = await buy('hotel deposit, POS (MCC 7011)', 500_000, { mcc: '7011', merchantName: 'GRAND HOTEL' })
  const dinner = await buy('dinner, POS (MCC 5812)', 80_000, { mcc: '5812', merchantName: 'CITY CAFE' })
  const taxi = await buy('taxi, POS (MCC 4121)', 30_000, { mcc: '4121', merchantName: 'METRO TAXI' })
  const fuel = await buy('fuel, POS (MCC 5541)', 200_000, { mcc: '5541', merchantName: 'FUEL POINT' })

  say('   the platform, downstream of each approval (its own books):')
  const did = (s: string): void => { say(`     ${s}`) }
  purchases.clear(urn, groceries); did(`groceries cleared in full, ${money(125_000)} (${groceries})`)
  purchases.clear(urn, hotel, 420_000); did(`hotel cleared for less: ${money(420_000)} of ${money(500_000)} (${hotel})`)
  purchases.clear(urn, dinner, 92_000); did(`dinner cleared for more, with the tip: ${money(92_000)} of ${money(80_000)} (${dinner})`)
  purchases.cancel(urn, taxi); did(`taxi cancelled by the merchant after our 00: a reversal of ${money(30_000)} (${taxi})`)
  purchases.neverComplete(urn, fuel); did(`fuel never completes: nothing posted, the approval stays open (${fuel})`)
  purchases.refund(urn, groceries, 25_000); did(`groceries: ${money(25_000)} refunded (${groceries})`)
  const forcePost = `OFFLINE${d.run}`
  purchases.forcePost(urn, last4, forcePost, 15_000); did(`a purchase made offline, force posted with no authorization: ${money(15_000)} (${forcePost})`)
  purchases.fee(urn, `FEE${d.run}`, 2_500, last4); did(`the card's monthly fee: ${money(2_500)}`)
  let others = 0
  let othersAmount = 0
  for (const a of purchases.all()) {
    if (a.state !== 'open') continue
    purchases.clear(a.urn, a.reference)
    others++
    othersAmount += a.authorized
  }
  did(`every other approval of the day cleared in full: ${others}, ${money(othersAmount)}`)

  const statementId = `D-${new Date(d.dayStartMs).toISOString().slice(0, 10).replaceAll('-', '')}-${d.run}`
  const q = new URLSearchParams({ id: statementId, from: new Date(d.dayStartMs).toISOString(), to: new Date(Date.now() + 1).toISOString(), complete: 'true' })
  const res = await request(`${d.prepaidUrl}/__sim/statement?${q.toString()}`)
  let statement = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`the platform's statement answered ${res.statusCode}: ${statement}`)
  if (d.plant === 'drop-refund-line') statement = statement.split('\n').filter((l) => !l.includes('"type":"refund"')).join('\n')
  const lines = statement.trim().split('\n')
  say(`   the platform's statement ${statementId} (extauth-v1, GET /__sim/statement): ${lines.length - 1} postings, e.g.`)
  say(`     ${lines[0] ?? ''}`)
  say(`     ${lines[1] ?? ''}`)

  const report = await d.importStatement(statement)
  say(`   imported (POST /admin/v1/statements): ${String(report.lines)} lines, ${String(report.applied)} applied, ${String(report.exceptions)} exception(s)`)
  const outcomes = report.outcomes as Record<string, { count: number, amount: string }>
  for (const [outcome, o] of Object.entries(outcomes)) say(`     ${outcome.padEnd(18)} ${String(o.count).padStart(3)}  ${money(o.amount).padStart(10)}`)

  const open = await call('GET', '/admin/v1/reconciliation/exceptions?status=open&limit=50')
  const opened = (open.items as Array<Record<string, string>>).map((x) => ({ id: x.id as string, kind: x.kind as string, reference: x.reference as string }))
  say(`   the queue: ${opened.map((x) => `${x.kind} ${x.reference}`).join(', ') || 'empty'}`)
  const resolved: DayResult['resolved'] = []
  const target = opened.find((x) => x.kind === 'force_post' && x.reference === forcePost)
  if (target !== undefined) {
    const reason = 'the platform confirmed the offline purchase'
    const r = await call('POST', `/admin/v1/reconciliation/exceptions/${encodeURIComponent(target.id)}/resolve`, { action: 'accept', reason })
    resolved.push({ ...target, action: String((r.resolution as { action?: string } | undefined)?.action), reason: String((r.resolution as { reason?: string } | undefined)?.reason) })
    say(`   resolved ${target.id}: accept, "${reason}" (nothing more moves: the force post was debited on import)`)
  }
  const left = await call('GET', '/admin/v1/reconciliation/exceptions?status=open&limit=50')
  const stillOpen = (left.items as unknown[]).length
  say(`   open exceptions left: ${stillOpen}`)

  const booksRes = await request(`${d.prepaidUrl}/__sim/books`)
  const platform = await booksRes.body.json() as { customers: Array<{ urn: string, balance: string, held: string }> }
  const books: BookRow[] = []
  say('   the books, here and on the platform (GET /__sim/books):')
  say(`     ${'urn'.padEnd(12)} ${'ledger'.padStart(10)} ${'platform'.padStart(10)} ${'held'.padStart(10)} ${'its holds'.padStart(10)}`)
  for (const p of platform.customers) {
    const c = await call('GET', `/admin/v1/customers/${p.urn}`)
    const row: BookRow = { urn: p.urn, ledger: String(c.ledger), held: String(c.held), platformBalance: p.balance, platformHeld: p.held, agree: c.ledger === p.balance && c.held === p.held }
    books.push(row)
    say(`     ${p.urn.padEnd(12)} ${money(row.ledger).padStart(10)} ${money(row.platformBalance).padStart(10)} ${money(row.held).padStart(10)} ${money(row.platformHeld).padStart(10)}  ${row.agree ? 'agree' : 'DISAGREE'}`)
  }
  const agree = books.length > 0 && books.every((b) => b.agree)
  say(agree
    ? `   the books agree: every customer's ledger is the platform's balance, and what is held is the approval that never completed (${fuel}), until expiry releases it`
    : '   the books DISAGREE: see the rows above')
  return { statementId, report, opened, resolved, stillOpen, books, agree, neverCompleted: fuel, forcePost }
}
