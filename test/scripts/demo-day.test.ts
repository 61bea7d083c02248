// npm run demo's day, run as the demo runs it (scripts/lib/demo-run.ts, SETTLEMENT_MODE=holds on the embedded
// store): after the platform's statement is imported and the force post's exception resolved, every customer's
// ledger and held here are the platform's books. A statement that leaves out one of the platform's postings
// must leave the books disagreeing, so the demo's check is one that can fail.
import t from 'tap'
import { runDemo } from '../../scripts/lib/demo-run.js'

t.test('the day closes with the books agreeing and exactly the force post resolved', async (t) => {
  const lines: string[] = []
  const { day } = await runDemo({ say: (s) => { lines.push(s) } })
  t.ok(day.agree, `books agree:\n${lines.slice(-6).join('\n')}`)
  t.same(day.books.map((b) => b.urn).sort(), ['DEMO000001', 'DEMO000002'], 'every customer of the platform compared')
  const two = day.books.find((b) => b.urn === 'DEMO000002')
  // 10,000.00 - 1,250.00 - 4,200.00 - 920.00 + 250.00 - 150.00 - 25.00; the fuel approval (2,000.00) still held
  t.same(two, { urn: 'DEMO000002', ledger: '370500', held: '200000', platformBalance: '370500', platformHeld: '200000', agree: true })
  t.equal(day.books.find((b) => b.urn === 'DEMO000001')?.held, '0', 'every approval of the first cardholder cleared')

  t.same(day.opened.map((x) => [x.kind, x.reference]), [['force_post', day.forcePost]], 'the statement opened one exception: the force post')
  t.equal(day.resolved.length, 1)
  t.match(day.resolved[0], { id: day.opened[0]?.id, kind: 'force_post', action: 'accept', reason: /platform confirmed/ })
  t.equal(day.stillOpen, 0, 'nothing left open')

  const outcomes = day.report.outcomes as Record<string, { count: number, amount: string }>
  t.match(outcomes, {
    cleared_partial: { count: 1, amount: '420000' },
    cleared_over: { count: 1, amount: '92000' },
    reversal: { count: 1, amount: '30000' },
    refund: { count: 1, amount: '25000' },
    force_post: { count: 1, amount: '15000' },
    fee: { count: 1, amount: '2500' },
    lifecycle_matched: { count: 1, amount: '201000' }
  })
  t.equal(day.report.applied, day.report.lines, 'every posting applied once')
  t.ok(lines.some((l) => l.includes('the books agree')))
})

t.test('a statement without the platform\'s refund leaves the books disagreeing, and the demo says so', async (t) => {
  const lines: string[] = []
  const { day } = await runDemo({ say: (s) => { lines.push(s) }, plant: 'drop-refund-line' })
  t.notOk(day.agree)
  const two = day.books.find((b) => b.urn === 'DEMO000002')
  t.equal(Number(two?.platformBalance) - Number(two?.ledger), 25000, 'the refund is the difference')
  t.ok(day.books.find((b) => b.urn === 'DEMO000001')?.agree, 'the other customer still agrees')
  t.ok(lines.some((l) => l.includes('DISAGREE')))
})
