// GET and POST /admin/v1/standin (docs/operations/standin.md): this instance's stand-in state, and forcing it
// on or off with a reason (scope `standin`, audited). Without STANDIN_POLICY_FILE the state says so and a
// force is refused NOT_CONFIGURED.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AuditContext } from '../domain/audit.js'
import { apiError } from '../errors.js'
import { auditAfterChange } from './admin-auth.js'
import { TAGS } from './openapi.js'
import type { Store } from '../store/types.js'
import type { Forced, StandIn, StandInStatus } from '../standin/stand-in.js'

export interface StandInRoutesOptions {
  store: Store
  standIn?: StandIn
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

function forcedView (f: Forced | null): Record<string, unknown> | null {
  return f === null ? null : { on: f.on, reason: f.reason, at: iso(f.atMs), keyId: f.keyId }
}

/**
 * Forces stand-in on this instance (null: ends the forcing), logged and audited (key, before and after; `ctx`:
 * the audit context, the console's with its reason). The admin API's route and the console's form both.
 */
export async function forceStandIn (standIn: StandIn, store: Store, request: FastifyRequest, on: boolean | null, reason: string, ctx?: AuditContext): Promise<void> {
  const { before, after } = standIn.force(on, reason, request.adminKey?.id ?? null)
  request.log.warn({ forced: on, reason, keyId: request.adminKey?.id }, on === null ? 'stand-in forcing ended' : `stand-in forced ${on ? 'on' : 'off'}`)
  // not one store script (and the store may be the reason): a record the store cannot take is logged whole
  await auditAfterChange(store, request, { outcome: 'done', before: { forced: forcedView(before) }, after: { forced: forcedView(after) } }, ctx)
}

/** The answer of both routes. */
export function statusView (s: StandInStatus, standIn: StandIn): Record<string, unknown> {
  const p = standIn.policy
  return {
    state: s.state,
    since: iso(s.sinceMs),
    forced: forcedView(s.forced),
    decisions: s.decisions,
    amount: s.amount,
    replayBacklog: s.replayBacklog,
    replayed: s.replayed,
    caps: {
      perCard: { count: p.perCard.count, amount: String(p.perCard.amount) },
      perInstance: { ...(p.perInstance.count !== null ? { count: p.perInstance.count } : {}), amount: String(p.perInstance.amount) }
    }
  }
}

const statusAnswer = {
  description: 'this instance\'s stand-in: `state` is `standby` (deciding with the store), `active` (deciding in stand-in), ' +
    '`replaying` (the store answers, stand-in approvals still being replayed) or `not_configured` (no STANDIN_POLICY_FILE)',
  type: 'object',
  required: ['state'],
  properties: {
    state: { enum: ['standby', 'active', 'replaying', 'not_configured'] },
    since: { type: ['string', 'null'], description: 'ISO 8601: the first stand-in decision of this outage' },
    forced: { type: ['object', 'null'], description: '{on, reason, at, keyId} while forced by an operator' },
    decisions: { type: 'object', description: 'this outage\'s stand-in decisions on this instance: approved, declined, byCode' },
    amount: { type: 'string', description: 'this outage\'s approved amount on this instance, minor units' },
    replayBacklog: { type: 'object', description: '{count, amount}: approvals not yet replayed into the store' },
    replayed: { type: 'object', description: 'replays since start, by outcome (applied, existing, existing_decline, conflict, unknown_urn, unconfirmed)' },
    caps: { type: 'object', description: 'the policy\'s caps per card and per instance' }
  }
}

export async function standInRoutes (app: FastifyInstance, opts: StandInRoutesOptions): Promise<void> {
  const { standIn } = opts

  app.get('/admin/v1/standin', {
    config: { scope: 'read' },
    schema: { tags: [TAGS.operations], summary: 'This instance\'s stand-in state', description: 'Whether this instance decides in stand-in while the store is unreachable, this outage\'s decisions and the replay backlog. docs/operations/standin.md', answers: { 200: statusAnswer } }
  }, async () => standIn === undefined ? { state: 'not_configured' } : statusView(standIn.status(), standIn))

  app.post<{ Body: { on: boolean | null, reason: string } }>('/admin/v1/standin', {
    config: { scope: 'standin' },
    schema: {
      tags: [TAGS.operations],
      summary: 'Force stand-in on or off on this instance, with a reason (audited); `on: null` ends the forcing',
      description: 'On: every decision of this instance is made by the stand-in policy, without asking the store, and nothing is replayed ' +
        'until it is forced off or the forcing ends. Off: never in stand-in (an unreachable store is answered 05). null: back to the store\'s ' +
        'evidence. Applies to this instance only. docs/operations/standin.md',
      answers: { 200: statusAnswer },
      errors: ['NOT_CONFIGURED'],
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['on', 'reason'],
        properties: {
          on: { type: ['boolean', 'null'], description: 'true: force on; false: force off; null: end the forcing' },
          reason: { type: 'string', minLength: 1, maxLength: 500, description: 'why (kept in the audit trail)' }
        },
        examples: [{ on: true, reason: 'Redis primary under maintenance, change CHG-1234' }]
      }
    }
  }, async (request) => {
    if (standIn === undefined) throw apiError('NOT_CONFIGURED', 'stand-in is not configured on this instance (STANDIN_POLICY_FILE)')
    const { on, reason } = request.body
    await forceStandIn(standIn, opts.store, request, on, reason)
    return statusView(standIn.status(), standIn)
  })
}
