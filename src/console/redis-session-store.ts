// The console's sessions in Redis, so that every instance behind a load balancer knows them: a request may land
// on any instance, sign-out ends the session on all of them. Each session is one key that expires after the
// idle timeout, its time started again on every use (the same rule as the in-memory store). The key is named by
// the SHA-256 of the session id, never the id itself: whoever reads Redis cannot use a session from it. What is
// kept is the key's id and scopes, the form token's secret and a flash message; never the admin key.
//
// Bounded like the in-memory store: at most `sessionsMax` signed-in sessions and as many not signed in (a
// sign-in page's form token), each set a sorted set by last use; past the bound the least recently used goes.
// A flood of sign-in pages fills only its own set: it cannot push a signed-in person out. Every key shares the
// hash tag `{console}`, so a transaction stays on one Redis Cluster slot.
import { createHash } from 'node:crypto'
import type { Redis, Cluster } from 'ioredis'
import type { SessionStore } from '@fastify/session'
import type { Session } from 'fastify'

type Callback = (err?: unknown) => void
type CallbackSession = (err: unknown, result?: Session | null) => void

const digestOf = (id: string): string => createHash('sha256').update(id).digest('hex')

export class RedisSessionStore implements SessionStore {
  private readonly base: string

  constructor (
    private readonly client: Redis | Cluster, prefix: string,
    private readonly idleMs: number, private readonly sessionsMax: number, private readonly clock: () => number
  ) {
    this.base = `${prefix}{console}`
  }

  private key (digest: string): string { return `${this.base}:s:${digest}` }
  /** the sessions signed in, or not, by last use (ms) */
  private uses (signedIn: boolean): string { return `${this.base}:${signedIn ? 'in' : 'out'}` }

  set (id: string, session: Session, callback: Callback): void {
    this.save(id, session).then(() => { callback() }, callback)
  }

  get (id: string, callback: CallbackSession): void {
    this.load(id).then((s) => { callback(null, s) }, (err) => { callback(err) })
  }

  destroy (id: string, callback: Callback): void {
    const d = digestOf(id)
    this.client.multi().del(this.key(d)).zrem(this.uses(true), d).zrem(this.uses(false), d).exec()
      .then(() => { callback() }, callback)
  }

  private async save (id: string, session: Session): Promise<void> {
    const d = digestOf(id)
    const now = this.clock()
    const signedIn = typeof session.keyId === 'string'
    const own = this.uses(signedIn)
    const results = await this.client.multi()
      .set(this.key(d), JSON.stringify(session), 'PX', this.idleMs)
      .zrem(this.uses(!signedIn), d)
      .zadd(own, now, d)
      // entries of sessions whose key has expired
      .zremrangebyscore(own, '-inf', `(${now - this.idleMs}`)
      .pexpire(own, this.idleMs)
      .zcard(own)
      .exec()
    const count = Number(results?.[5]?.[1] ?? 0)
    if (count <= this.sessionsMax) return
    const gone = await this.client.zpopmin(own, count - this.sessionsMax)
    const digests = gone.filter((_, i) => i % 2 === 0)
    if (digests.length > 0) await this.client.del(...digests.map((g) => this.key(g)))
  }

  private async load (id: string): Promise<Session | null> {
    const d = digestOf(id)
    const results = await this.client.multi()
      .get(this.key(d))
      .pexpire(this.key(d), this.idleMs)
      .exec()
    const raw = results?.[0]?.[1]
    if (typeof raw !== 'string') return null
    const session = JSON.parse(raw) as Session
    // its last use, for the bound (XX: a session destroyed meanwhile is not added back)
    await this.client.zadd(this.uses(typeof session.keyId === 'string'), 'XX', this.clock(), d)
    return session
  }
}
