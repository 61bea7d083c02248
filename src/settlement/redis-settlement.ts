// The settlement on Redis: the scripts of lua/ (lua.ts), each on one bucket's slot.
import { Cluster, ReplyError, type Redis } from 'ioredis'
import { fcallRefused, loadFunctionLibrary } from '../store/functions.js'
import { POSTING_FUNCTION, POSTING_LIBRARY } from './functions.js'
import { bucketOf, part } from '../store/keys.js'
import { send, type RedisStore } from '../store/redis.js'
import { backlogPerBucket, BUCKETS_FOR_SETTLEMENT, EVENTS_BACKLOG_MAX_DEFAULT, AUDIT_RETENTION_MS_DEFAULT } from './store-constants.js'
import type { AuditContext } from '../domain/audit.js'
import { apiError } from '../errors.js'
import { EXPIRE_LUA, NOT_POSTED_LUA, OPEN_EXCEPTION_LUA, POSTING_LUA, RESOLVE_LUA } from './lua.js'
import { postingFingerprint } from './memory-settlement.js'
import { pageOf } from './exception-page.js'
import {
  type DecisionSettlement,
  POSTING_RETENTION_MS, bucketOfException, type ExceptionFilter, type LifecycleVerdict, type NewException, type Outcome, type Posting,
  type PostingResult, type ReconException, type ResolveAction, type SettlementStore, type StatementReport
} from './types.js'

interface Commands {
  extauthPosting: (...args: string[]) => Promise<unknown>
  extauthExpire: (...args: string[]) => Promise<unknown>
  extauthResolve: (...args: string[]) => Promise<unknown>
  extauthNotPosted: (...args: string[]) => Promise<unknown>
  extauthOpenException: (...args: string[]) => Promise<unknown>
}

export interface RedisSettlementOptions {
  backlogMax?: number
  auditRetentionMs?: number
}

export class RedisSettlement implements SettlementStore {
  private readonly client: Redis | Cluster
  private readonly prefix: string
  private readonly cmd: Commands
  private readonly backlog: string
  private readonly auditKeepS: string
  /** the posting function: null until loaded (or to load again), false where Redis will not (EVALSHA) */
  private functions: boolean | null = null
  private loading: Promise<void> | null = null

  constructor (private readonly store: RedisStore, opts: RedisSettlementOptions = {}) {
    this.client = store.client
    this.prefix = store.keys.prefix
    this.client.defineCommand('extauthPosting', { lua: POSTING_LUA, numberOfKeys: 4 })
    this.client.defineCommand('extauthExpire', { lua: EXPIRE_LUA, numberOfKeys: 1 })
    this.client.defineCommand('extauthResolve', { lua: RESOLVE_LUA, numberOfKeys: 2 })
    this.client.defineCommand('extauthNotPosted', { lua: NOT_POSTED_LUA, numberOfKeys: 2 })
    this.client.defineCommand('extauthOpenException', { lua: OPEN_EXCEPTION_LUA, numberOfKeys: 2 })
    this.cmd = this.client as unknown as Commands
    this.backlog = String(backlogPerBucket(opts.backlogMax ?? EVENTS_BACKLOG_MAX_DEFAULT))
    this.auditKeepS = String(Math.ceil((opts.auditRetentionMs ?? AUDIT_RETENTION_MS_DEFAULT) / 1000))
  }

  private tag (bucket: number): string { return `${this.prefix}{b${bucket}}` }
  private stream (bucket: number): string { return `${this.tag(bucket)}:s` }

  async applyPosting (p: Posting, statementId: string, lifecycle: LifecycleVerdict | null): Promise<PostingResult> {
    const bucket = bucketOf(p.urn)
    const k = this.store.keys
    const args = [
      k.customer(p.urn), k.decision(p.urn, p.reference), this.stream(bucket), `${this.tag(bucket)}:p:${part(p.platformId)}`,
      p.platformId, p.type, p.reference, p.urn, p.last4, String(p.amount), statementId, p.postedAt, this.backlog,
      String(POSTING_RETENTION_MS / 1000), postingFingerprint(p), String(bucket),
      lifecycle === null ? '' : lifecycle.matched ? 'matched' : 'mismatch', String(lifecycle?.acceptDelta ?? 0), lifecycle?.detail ?? '',
      lifecycle?.failed?.exceptionId ?? '', String(lifecycle?.failed?.held ?? 0), String(lifecycle?.failed?.sign ?? 1)]
    const out = await send(this.client, async () => await this.postingCall(args)) as [string, string, string, string, string]
    this.store.onEvent?.(bucket)
    const [status, outcome, sid, x, available] = out
    return {
      status: status === 'OK' ? 'applied' : status === 'REPLAY' ? 'replayed' : 'conflict',
      outcome: outcome as Outcome,
      statementId: sid,
      exceptions: x === '{}' ? [] : JSON.parse(x) as string[],
      available: available === '' ? null : Number(available)
    }
  }

  /** FCALL of the posting function once its library is loaded; EVALSHA where this Redis will not load it */
  private async postingCall (args: string[]): Promise<unknown> {
    if (this.functions === null) {
      this.loading ??= (async () => { this.functions = await loadFunctionLibrary(this.client, POSTING_LIBRARY) })().finally(() => { this.loading = null })
      await this.loading
    }
    if (this.functions === true) {
      try {
        return await this.client.call('FCALL', POSTING_FUNCTION, '4', ...args)
      } catch (err) {
        // a Redis restarted empty: load again on the next call, this one goes by EVALSHA
        if (!(err instanceof ReplyError && fcallRefused((err as Error).message) !== null)) throw err
        this.functions = null
      }
    }
    return await this.cmd.extauthPosting(...args)
  }

  async dueBuckets (asOfMs: number): Promise<number[]> {
    const firsts = await Promise.all(Array.from({ length: BUCKETS_FOR_SETTLEMENT }, async (_v, b) =>
      await this.client.zrangebyscore(`${this.stream(b)}:h`, '-inf', String(asOfMs), 'LIMIT', 0, 1)))
    return firsts.flatMap((f, b) => f.length > 0 ? [b] : [])
  }

  async expireBucket (bucket: number, asOfMs: number, max: number): Promise<{ expired: number, more: boolean }> {
    const [expired, more] = await send(this.client, async () => await this.cmd.extauthExpire(this.stream(bucket), String(asOfMs), String(max), this.backlog)) as [number, string]
    if (expired > 0) this.store.onEvent?.(bucket)
    return { expired: Number(expired), more: more === '1' }
  }

  private exceptionKey (id: string): string | null {
    const b = bucketOfException(id)
    return b === null || b >= BUCKETS_FOR_SETTLEMENT ? null : `${this.tag(b)}:x:${id}`
  }

  async getException (id: string): Promise<ReconException | null> {
    const key = this.exceptionKey(id)
    if (key === null) return null
    const raw = await this.client.get(key)
    return raw === null ? null : exceptionOf(raw)
  }

  async listExceptions (filter: ExceptionFilter): Promise<{ items: ReconException[], nextCursor: string | null }> {
    const index = filter.status === 'open' ? 'xo' : 'xa'
    const buckets = filter.urn !== undefined ? [bucketOf(filter.urn)] : Array.from({ length: BUCKETS_FOR_SETTLEMENT }, (_v, b) => b)
    const all = await Promise.all(buckets.map(async (b) => {
      const ids = await this.client.zrange(`${this.stream(b)}:${index}`, 0, -1)
      if (ids.length === 0) return []
      const raws = await this.client.mget(...ids.map((id) => `${this.tag(b)}:x:${id}`))
      return raws.flatMap((r) => r === null ? [] : [exceptionOf(r)])
    }))
    return pageOf(all.flat(), filter)
  }

  async markResolved (id: string, r: { action: ResolveAction, amount: string, reason: string, keyId: string }, audit?: AuditContext): Promise<{ replayed: boolean, exception: ReconException }> {
    const key = this.exceptionKey(id)
    if (key === null) throw apiError('EXCEPTION_NOT_FOUND', `no exception ${id}`)
    const bucket = bucketOfException(id) as number
    const out = await send(this.client, async () => await this.cmd.extauthResolve(key, this.stream(bucket), JSON.stringify(r), this.backlog,
      audit === undefined ? '' : JSON.stringify(audit), this.auditKeepS)) as string[]
    if (out[0] === 'EXCEPTION_NOT_FOUND') throw apiError('EXCEPTION_NOT_FOUND', `no exception ${id}`)
    if (out[0] === 'ALREADY_RESOLVED') throw apiError('ALREADY_RESOLVED', `exception ${id} is resolved already, with another action`)
    this.store.onEvent?.(bucket)
    return { replayed: out[0] === 'REPLAY', exception: exceptionOf(out[1] as string) }
  }

  async decisionSettlement (urn: string, reference: string): Promise<DecisionSettlement> {
    const dkey = this.store.keys.decision(urn, reference)
    // the decision's settlement state, '<tag>:ds:<decision key tail>' (settlement.lua's readState)
    const raw = await this.client.get(`${this.tag(bucketOf(urn))}:ds:${dkey.slice(dkey.indexOf('}:d:') + 4)}`)
    const st = raw === null ? {} : JSON.parse(raw) as { cl?: string | number, ex?: number }
    return { cleared: Number(st.cl ?? 0), expiredAtMs: typeof st.ex === 'number' ? st.ex : null }
  }

  async notPosted (urn: string, reference: string, statementId: string): Promise<{ id: string, amount: number } | null> {
    const bucket = bucketOf(urn)
    const id = await send(this.client, async () => await this.cmd.extauthNotPosted(this.store.keys.decision(urn, reference), this.stream(bucket),
      urn, reference, statementId, String(bucket), this.backlog)) as string
    if (id === '') return null
    this.store.onEvent?.(bucket)
    const x = await this.getException(id)
    return { id, amount: Number(x?.amount ?? '0') }
  }

  async openException (n: NewException): Promise<{ id: string, opened: boolean }> {
    const bucket = bucketOf(n.urn)
    const id = `b${bucket}~${n.key}`
    const x = {
      id, kind: n.kind, status: 'open', urn: n.urn, reference: n.reference, last4: n.last4, platformId: '', statementId: '', postingType: n.postingType,
      outcome: n.outcome, amount: String(n.amount), accept: { action: n.accept.action, amount: String(n.accept.amount) }, detail: n.detail
    }
    const opened = await send(this.client, async () => await this.cmd.extauthOpenException(`${this.tag(bucket)}:x:${id}`, this.stream(bucket), JSON.stringify(x), this.backlog))
    if (Number(opened) === 1) this.store.onEvent?.(bucket)
    return { id, opened: Number(opened) === 1 }
  }

  async putStatement (report: StatementReport): Promise<void> {
    await this.client.set(`${this.prefix}statement:${part(report.id)}`, JSON.stringify(report))
  }

  async getStatement (id: string): Promise<StatementReport | null> {
    const raw = await this.client.get(`${this.prefix}statement:${part(id)}`)
    return raw === null ? null : JSON.parse(raw) as StatementReport
  }
}

/** an exception as the scripts wrote it (cjson writes an empty detail as "" and numbers as numbers) */
function exceptionOf (raw: string): ReconException {
  const x = JSON.parse(raw) as ReconException
  x.createdAtMs = Number(x.createdAtMs)
  if (x.resolution !== undefined) x.resolution.atMs = Number(x.resolution.atMs)
  return x
}
