import t from 'tap'
import { HashSet53 } from '../../src/settlement/id-set.js'

t.test('a hash seen before is told apart from a new one, through the table\'s growth', async (t) => {
  const s = new HashSet53()
  const n = 50_000
  // 0, the largest 53-bit number, and values whose low bits meet (probing past each other)
  const values = [0, 2 ** 53 - 1, ...Array.from({ length: n }, (_v, i) => (i + 1) * 0x40000000 + (i % 7))]
  let fresh = 0
  for (const v of values) if (!s.add(v)) fresh++
  t.equal(fresh, values.length, 'each one new')
  t.equal(s.size, values.length)
  let again = 0
  for (const v of values) if (s.add(v)) again++
  t.equal(again, values.length, 'each one there already')
  t.equal(s.size, values.length, 'nothing added twice')
  t.equal(s.add((n + 1) * 0x40000000 + 3), false, 'a new one')
  s.clear()
  t.equal(s.size, 0)
  t.equal(s.add(0), false)
})
