// The deadline guard: one timer for every request in flight, each answered once, by its decision or by its
// deadline, whatever order the requests come in; the abort hook runs before the deadline answer, and holds
// nothing once the request is let go.
import t from 'tap'
import { DeadlineGuard, InFlight } from '../../src/decision/deadline.js'
import { manualClock } from '../helpers/manual-clock.js'

const T0 = 1_700_000_000_000

t.test('requests are answered on their deadlines in deadline order, by one timer', async (t) => {
  const clock = manualClock(T0)
  const guard = new DeadlineGuard(clock)
  const answered: string[] = []
  const started = [['a', 2000], ['b', 2001], ['c', 2001], ['d', 2500]] as const
  for (const [name, ms] of started) guard.start(T0 + ms, () => { answered.push(name) })
  t.equal(clock.pending(), 1, 'one timer for four requests')
  t.equal(guard.size, 4)
  clock.advanceTo(T0 + 1999)
  t.same(answered, [], 'nothing before the first deadline')
  clock.advanceTo(T0 + 2001)
  t.same(answered, ['a', 'b', 'c'], 'every request whose deadline has come, in order')
  t.equal(clock.pending(), 1, 'the timer is set again for the next one')
  clock.advanceTo(T0 + 2500)
  t.same(answered, ['a', 'b', 'c', 'd'])
  t.equal(guard.size, 0)
  t.equal(clock.pending(), 0, 'no timer is left when nothing is in flight')
})

t.test('a request started later with an earlier deadline (a slow body) is not held behind the others', async (t) => {
  const clock = manualClock(T0)
  const guard = new DeadlineGuard(clock)
  const answered: string[] = []
  guard.start(T0 + 3400, () => { answered.push('late') })
  guard.start(T0 + 2000, () => { answered.push('early') })
  guard.start(T0 + 2700, () => { answered.push('middle') })
  clock.advanceTo(T0 + 2000)
  t.same(answered, ['early'], 'answered on its own deadline')
  clock.advanceTo(T0 + 2700)
  t.same(answered, ['early', 'middle'])
  clock.advanceTo(T0 + 3400)
  t.same(answered, ['early', 'middle', 'late'])
})

t.test('a finished request is never answered by the deadline, nor aborted', async (t) => {
  const clock = manualClock(T0)
  const guard = new DeadlineGuard(clock)
  const seen: string[] = []
  const a = guard.start(T0 + 2000, () => { seen.push('a deadline') })
  const b = guard.start(T0 + 2010, () => { seen.push('b deadline') })
  a.onAbort(() => { seen.push('a aborted') })
  b.onAbort(() => { seen.push('b aborted') })
  t.equal(guard.finish(a), true, 'the decision answers')
  t.equal(guard.finish(a), false, 'only once')
  a.onAbort(() => { seen.push('a hook set after finish') })
  clock.advanceTo(T0 + 2010)
  t.same(seen, ['b aborted', 'b deadline'], 'only b: its abort hook first, then its deadline answer')
  t.equal(a.aborted, false)
  t.equal(b.aborted, true)
  t.equal(guard.finish(b), false, 'a result after the deadline answer is dropped')
  t.equal(guard.size, 0)
})

t.test('the abort hook is one slot: replaced and cleared, never piled up', async (t) => {
  const f = new InFlight(T0)
  const ran: string[] = []
  f.onAbort(() => { ran.push('first') })
  f.onAbort(() => { ran.push('second') })
  f.expire()
  t.same(ran, ['second'], 'the later hook replaced the earlier one')
  const g = new InFlight(T0)
  g.onAbort(() => { ran.push('cleared') })
  g.onAbort(null)
  g.expire()
  t.same(ran, ['second'], 'a cleared hook does not run')
})

t.test('the signal for outbound calls aborts with the request, made before or after the deadline', async (t) => {
  const clock = manualClock(T0)
  const guard = new DeadlineGuard(clock)
  const before = guard.start(T0 + 100, () => {})
  const signal = before.signal
  t.equal(signal.aborted, false)
  const after = guard.start(T0 + 100, () => {})
  clock.advanceTo(T0 + 100)
  t.equal(signal.aborted, true, 'a signal handed out earlier is aborted on the deadline')
  t.equal(after.signal.aborted, true, 'one asked for after the deadline is born aborted')
})

t.test('a deadline already past when the request starts is answered on the next timer turn, not at once', async (t) => {
  const clock = manualClock(T0)
  const guard = new DeadlineGuard(clock)
  let answered = false
  guard.start(T0 - 5, () => { answered = true })
  t.equal(answered, false, 'not inside start: the caller has not handed its work over yet')
  clock.advanceTo(T0)
  t.equal(answered, true)
})
