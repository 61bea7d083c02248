// The console's sessions in this process's memory, for the embedded store (one instance: the store itself lives
// in this process; on Redis the sessions are there, redis-session-store.ts). Bounded: a session unused for the idle timeout is
// gone, and past `sessionsMax` the least recently used goes first, sessions not signed in (a sign-in page's
// form token) before signed-in ones: loading the sign-in page many times cannot push a signed-in person out.
import type { SessionStore } from '@fastify/session'
import type { Session } from 'fastify'
import { RedisStore } from '../store/redis.js'
import type { Store } from '../store/types.js'
import { RedisSessionStore } from './redis-session-store.js'

type Callback = (err?: unknown) => void
type CallbackSession = (err: unknown, result?: Session | null) => void

export class ConsoleSessionStore implements SessionStore {
  /** insertion order is use order: a session read or written moves to the end */
  private readonly sessions = new Map<string, { session: Session, seenMs: number }>()

  constructor (private readonly idleMs: number, private readonly sessionsMax: number, private readonly clock: () => number) {}

  get size (): number {
    return this.sessions.size
  }

  set (id: string, session: Session, callback: Callback): void {
    const now = this.clock()
    this.sessions.delete(id)
    this.sessions.set(id, { session, seenMs: now })
    // oldest first: the idle ones, then past the bound those not signed in, then the least recently used
    for (const [k, v] of this.sessions) {
      if (now - v.seenMs < this.idleMs) break
      this.sessions.delete(k)
    }
    for (const [k, v] of this.sessions) {
      if (this.sessions.size <= this.sessionsMax) break
      if (v.session.keyId === undefined) this.sessions.delete(k)
    }
    for (const [k] of this.sessions) {
      if (this.sessions.size <= this.sessionsMax) break
      this.sessions.delete(k)
    }
    callback()
  }

  get (id: string, callback: CallbackSession): void {
    const v = this.sessions.get(id)
    if (v === undefined || this.clock() - v.seenMs >= this.idleMs) {
      this.sessions.delete(id)
      callback(null, null)
      return
    }
    this.sessions.delete(id)
    v.seenMs = this.clock()
    this.sessions.set(id, v)
    callback(null, v.session)
  }

  destroy (id: string, callback: Callback): void {
    this.sessions.delete(id)
    callback()
  }
}

/** The sessions where the store is: Redis (every instance sees them), else this process's memory. */
export function sessionStoreFor (store: Store, idleMs: number, sessionsMax: number, clock: () => number): SessionStore {
  if (store instanceof RedisStore) return new RedisSessionStore(store.client, store.keys.prefix, idleMs, sessionsMax, clock)
  return new ConsoleSessionStore(idleMs, sessionsMax, clock)
}
