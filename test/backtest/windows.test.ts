// The replay's running windows against a plain list summed each time (the store's semantics), on seeded
// random traffic with some entries out of order; and the card controls' daily totals.
import t from 'tap'
import { CustomerState, ReplayWindow } from '../../src/backtest/windows.js'
import { rng } from './helpers.js'

t.test('rolling window: the running totals equal the sum over the entries in the window', async t => {
  for (const seed of [1, 2, 3]) {
    const rnd = rng(seed)
    const lengthMs = 3_600_000
    const w = new ReplayWindow()
    const all: Array<{ at: number, amount: number }> = []
    let now = 0
    let mismatches = 0
    for (let i = 0; i < 5000; i++) {
      now += rnd(120_000)
      // one in ten arrives up to a second before the latest
      const at = rnd(10) === 0 ? Math.max(0, now - rnd(1000)) : now
      const start = at - lengthMs
      w.seek(start)
      const inWindow = all.filter(e => e.at >= start)
      if (w.count !== inWindow.length || w.amount !== inWindow.reduce((n, e) => n + e.amount, 0)) mismatches++
      if (rnd(3) !== 0) {
        const amount = 1 + rnd(10_000)
        w.add(at, amount, at - lengthMs)
        all.push({ at, amount })
      }
    }
    t.equal(mismatches, 0, `seed ${seed}: 5000 checks`)
  }
})

t.test('calendar window: the start jumps forward at the period change, and back when an entry is late', async t => {
  const w = new ReplayWindow()
  w.seek(0)
  w.add(10, 5, 0)
  w.add(20, 7, 0)
  w.seek(15)
  t.same([w.count, w.amount], [1, 7])
  w.seek(0)
  t.same([w.count, w.amount], [2, 12], 'moving back finds the entries still kept')
  w.seek(100)
  t.same([w.count, w.amount], [0, 0])
  w.add(50, 3, 0)
  t.same([w.count, w.amount], [0, 0], 'an entry before the window does not count in it')
  w.seek(40)
  t.same([w.count, w.amount], [1, 3])
})

t.test('daily totals: per local day; a later day starts from zero', async t => {
  const d = new CustomerState()
  d.dayTotal('1234', 'ATM').add('20261110', 500)
  d.dayTotal('1234', 'ATM').add('20261110', 700)
  t.equal(d.dayTotal('1234', 'ATM').on('20261110'), 1200)
  t.equal(d.dayTotal('1234', 'POS').on('20261110'), 0, 'per kind')
  t.equal(d.dayTotal('9999', 'ATM').on('20261110'), 0, 'per card')
  t.equal(d.dayTotal('1234', 'ATM').on('20261111'), 0)
  d.dayTotal('1234', 'ATM').add('20261111', 100)
  t.equal(d.dayTotal('1234', 'ATM').on('20261111'), 100)
})
