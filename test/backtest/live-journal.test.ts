// The baseline replay reproduces every decision the live endpoint made: generated traffic (limits, card
// controls, funds, customer and card states, unknown cards) sent through the real app over three simulated
// days, the stored decisions read back as journal entries, then backtested with the rules they were made under.
import t from 'tap'
import { join } from 'node:path'
import { build } from '../helpers/app.js'
import { platformHeaders } from '../helpers/config.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import type { JournalEntry } from '../../src/domain/journal.js'
import { effectiveControls, OPEN_CONTROLS, type ControlKind } from '../../src/domain/controls.js'
import { runBacktest } from '../../src/backtest/engine.js'
import { loadRuleSet } from '../../src/rules/load.js'
import { main } from '../../src/cli/main.js'
import { MemoryJournal } from '../../src/journal/source.js'
import { defaultRulesDir, editedRules, memorySource, tempDir, writeNdjson, rng } from './helpers.js'

const TZ = 'Asia/Kolkata'
const START = Date.UTC(2026, 10, 16, 2)

// ---------------------------------------------------------------------------------------------------------------
// Stand-in for the decision journal's export: builds a JournalEntry from the stored decision record plus what the
// test knows of the request and of the customer's state when it was sent. The journal's own reader (`extauth
// decisions export`) replaces this adapter once the decision record holds the request's fields.
async function decisionEntryOf (store: Store, request: Record<string, string>, seen: { customerStatus: string | null, cardStatus: string | null, controls: JournalEntry['controls'] }): Promise<JournalEntry> {
  const urn = request.urn as string
  const rec = await store.getDecision(urn, request.transactionReferenceNumber as string)
  if (rec === null) throw new Error(`no decision stored for ${request.transactionReferenceNumber as string}`)
  return {
    v: 1,
    urn,
    reference: rec.reference,
    last4: rec.last4,
    request,
    arrivedAt: new Date(rec.arrivedAtMs).toISOString(),
    decidedAt: new Date(rec.decidedAtMs).toISOString(),
    code: rec.code,
    reason: rec.reason,
    ruleId: rec.ruleId,
    control: rec.control === null ? null : { kind: rec.control.control, check: rec.control.check, limit: rec.control.limit ?? null, totalBefore: rec.control.totalBefore ?? null, debit: rec.control.debit },
    limit: null,
    availableSeen: null,
    debit: Number(rec.debit),
    shadowHits: rec.meta?.shadowHits.map(h => h.ruleId) ?? [],
    rulesVersion: rec.meta?.rulesVersion ?? '',
    controls: seen.controls,
    customerStatus: seen.customerStatus,
    cardStatus: seen.cardStatus,
    answeredOnDeadline: rec.answeredOnDeadline
  }
}

/** What the test knows of the customer, card and controls at the moment it sends a request. */
async function stateSeen (store: Store, request: Record<string, string>): Promise<{ customerStatus: string | null, cardStatus: string | null, controls: JournalEntry['controls'] }> {
  const urn = request.urn as string
  const last4 = request.last4Digits as string
  const c = await store.getCustomer(urn)
  if (c === null) return { customerStatus: null, cardStatus: null, controls: null }
  const cardStatus = c.cards[last4] ?? null
  const own = cardStatus === null ? {} : await store.getCardControls(urn, last4)
  const eff = effectiveControls(own, OPEN_CONTROLS)
  const controls: NonNullable<JournalEntry['controls']> = {}
  const kinds: ControlKind[] = []
  if (Object.hasOwn(eff, request.channel as string)) kinds.push(request.channel as ControlKind)
  if (request.billingCurrency !== undefined && request.billingCurrency !== (request.currencyCode ?? '356')) kinds.push('international')
  for (const k of kinds) controls[k] = { enabled: eff[k].enabled, perTransactionMax: eff[k].perTransactionMax ?? null, dailyMax: eff[k].dailyMax ?? null }
  return { customerStatus: c.status, cardStatus, controls }
}
// ---------------------------------------------------------------------------------------------------------------

t.test('generated traffic through the live endpoint, replayed: every decision reproduced', async t => {
  let now = START
  const realNow = Date.now
  Date.now = () => now
  t.teardown(() => { Date.now = realNow })
  const store = new MemoryStore({ clock: () => now })
  const app = await build(t, { store, clock: () => now, env: { RULES_DIR: defaultRulesDir, TIMEZONE: TZ } })

  const rnd = rng(16)
  const customers = Array.from({ length: 10 }, (_, i) => ({ urn: `LIVE${i}`, last4: String(5000 + i) }))
  for (const [i, c] of customers.entries()) {
    await store.putCustomer(c.urn, {})
    await store.putCard(c.urn, c.last4, 'ACTIVE')
    await store.credit(c.urn, i < 3 ? 400_000 : 50_000_000, `open-${i}`)
  }
  await store.putCustomer('LIVE9', { status: 'BLOCKED' })
  await store.putCard('LIVE8', '5008', 'LOST')
  await store.patchCardControls('LIVE3', '5003', { ATM: { dailyMax: 12_000 }, POS: { perTransactionMax: 300_000 } })
  await store.patchCardControls('LIVE4', '5004', { ECOM: { enabled: false } })
  await store.patchCardControls('LIVE5', '5005', { international: { dailyMax: 5_000 } })

  const entries: JournalEntry[] = []
  const codes = new Map<string, number>()
  for (let i = 0; i < 420; i++) {
    now += 1 + rnd(20 * 60_000)
    const c = customers[rnd(customers.length)] as { urn: string, last4: string }
    const channel = ['ATM', 'ATM', 'POS', 'POS', 'ECOM', 'POS-Contactless'][rnd(6)] as string
    const amount = channel === 'ATM' ? 1000 + rnd(5000) : 100 + rnd(500_000)
    const request: Record<string, string> = {
      urn: rnd(40) === 0 ? 'NOSUCHURN' : c.urn, terminalId: 'T1', systemTraceAuditNumber: String(i), cardNetwork: 'RUPAY', channel,
      transactionAmount: String(amount), transactionReferenceNumber: `LIVE-${i}`, currencyCode: '356',
      last4Digits: rnd(40) === 0 ? '9999' : c.last4, mcc: ['5411', '7995', '5999', '6051'][rnd(4)] as string
    }
    if (rnd(6) === 0) { request.billingCurrency = '840'; request.billingAmount = String(1 + Math.floor(amount / 80)) }
    if (i === 200) await store.putCard('LIVE2', '5002', 'BLOCKED')
    const seen = await stateSeen(store, request)
    const res = await app.publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: request })
    t.equal(res.statusCode, 200)
    const e = await decisionEntryOf(store, request, seen)
    t.equal((res.json() as { responseCode: string }).responseCode, e.code)
    codes.set(e.reason, (codes.get(e.reason) ?? 0) + 1)
    entries.push(e)
  }
  for (const reason of ['approved', 'rule', 'limit', 'control_off', 'control_limit', 'insufficient_funds', 'customer_blocked', 'card_lost', 'card_blocked', 'unknown_urn', 'card_unknown']) {
    t.ok((codes.get(reason) ?? 0) > 0, `the traffic has ${reason} decisions`)
  }

  const loaded = await loadRuleSet(defaultRulesDir, { timezone: TZ })
  if (!loaded.ok) throw new Error('the default rules must load')
  const set = loaded.set
  const fromMs = START
  const toMs = now + 1
  const { report } = await runBacktest({ source: memorySource(entries), candidate: set, baseline: set, baselineMode: 'recorded', fromMs, toMs, timezone: TZ })
  t.equal(report.decisions, entries.length)
  t.same(report.baseline.unreproduced, [], 'every recorded decision reproduced')
  t.equal(report.baseline.reproduced, entries.length)
  t.same(report.changed, [], 'the same rules change nothing')

  // The journal's own reader (what `extauth decisions export` writes) reproduces every decision too: each
  // field the replay needs is in the stored record.
  const recorded: JournalEntry[] = []
  for await (const e of new MemoryJournal(store).read(fromMs, toMs)) recorded.push(e)
  t.equal(recorded.length, entries.length, 'the journal holds every decision')
  t.same(recorded.map(e => [e.reference, e.code, e.reason, e.customerStatus, e.cardStatus]), entries.map(e => [e.reference, e.code, e.reason, e.customerStatus,
    // a customer refused before its card is looked at: the store never read the card
    ['customer_blocked', 'customer_closed', 'unknown_urn'].includes(e.reason) ? null : e.cardStatus]),
  'the journal records what the test saw, decision by decision')
  const fromJournal = await runBacktest({ source: memorySource(recorded), candidate: set, baseline: set, baselineMode: 'recorded', fromMs, toMs, timezone: TZ })
  t.same(fromJournal.report.baseline.unreproduced, [], 'the recorded journal reproduces every decision')

  // Through the command, from an export file: the same.
  const dir = await tempDir(t)
  const file = join(dir, 'journal.ndjson')
  await writeNdjson(file, entries)
  const raised = await editedRules(t, { '20-atm.json': s => s.replace('"max": 5 }', '"max": 50 }').replace('"max": 2500000 }', '"max": 100000000 }') })
  const out: string[] = []
  const code = await main(['rules', 'backtest', '--rules', raised, '--from', new Date(fromMs).toISOString(), '--to', new Date(toMs).toISOString(), '--journal', file, '--json', '--timezone', TZ],
    { out: l => { out.push(l) }, err: () => {}, env: { RULES_DIR: defaultRulesDir } })
  t.equal(code, 0)
  const viaFile = JSON.parse(out.join('\n')) as typeof report
  t.same(viaFile.baseline, report.baseline, 'the file gives the same reproduction')
  // With the ATM limits out of the way, every ATM limit decline turns into an approval unless the card's ATM
  // daily control (LIVE3, 12,000 a day) or funds as recorded stop it.
  const limitDeclines = entries.filter(e => e.reason === 'limit' && e.request.channel === 'ATM')
  t.ok(limitDeclines.length > 0, 'the traffic hit the ATM limits')
  for (const e of limitDeclines) {
    const c = viaFile.changed.find(x => x.reference === e.reference)
    if (e.urn === 'LIVE3') t.ok(c !== undefined && (c.to === '00' || c.to === '61'), `${e.reference}: approved, or stopped by the ATM daily control`)
    else t.match(c, { from: e.code, to: '00', baselineRule: e.ruleId, candidateRule: null }, `${e.reference} approved`)
  }
})
