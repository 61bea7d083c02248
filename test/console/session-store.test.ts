// The console's session store: a session unused for the idle time is gone; past the bound the sessions not
// signed in go first, then the least recently used; reading a session counts as using it.
import t from 'tap'
import type { Session } from 'fastify'
import { ConsoleSessionStore } from '../../src/console/session-store.js'

function get (s: ConsoleSessionStore, id: string): Session | null {
  let out: Session | null = null
  s.get(id, (_err, v) => { out = v ?? null })
  return out
}
function set (s: ConsoleSessionStore, id: string, v: Partial<Session>): void {
  s.set(id, v as Session, () => {})
}

t.test('idle sessions end; reading one keeps it', async (t) => {
  let now = 0
  const s = new ConsoleSessionStore(1000, 10, () => now)
  set(s, 'a', { keyId: 'x' })
  set(s, 'b', { keyId: 'y' })
  now = 900
  t.ok(get(s, 'a'), 'used within the idle time')
  now = 1800
  t.ok(get(s, 'a'), 'its time started again when read')
  t.equal(get(s, 'b'), null, 'the other one ended')
  now = 2800
  t.equal(get(s, 'a'), null)
  t.equal(s.size, 0)
})

t.test('past the bound, sessions not signed in go first, then the least recently used', async (t) => {
  let now = 0
  const s = new ConsoleSessionStore(60_000, 3, () => now)
  set(s, 'signed-1', { keyId: 'x' })
  now++
  set(s, 'signed-2', { keyId: 'y' })
  for (let i = 0; i < 50; i++) { now++; set(s, `anon-${i}`, {}) }
  t.equal(s.size, 3)
  t.ok(get(s, 'signed-1'), 'a flood of sign-in pages pushes no signed-in person out')
  t.ok(get(s, 'signed-2'))
  now++
  set(s, 'signed-3', { keyId: 'z' })
  now++
  set(s, 'signed-4', { keyId: 'w' })
  t.equal(s.size, 3)
  t.equal(get(s, 'signed-1'), null, 'the least recently used signed-in session went')
  t.ok(get(s, 'signed-4'))
})
