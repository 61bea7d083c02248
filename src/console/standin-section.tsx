// The stand-in section of the queues page (docs/operations/standin.md): whether this instance decides without
// the store, this outage's decisions and what is still to be replayed into the books; with the `standin` scope,
// a form that forces stand-in on or off on this instance (or ends the forcing) with a reason, as
// POST /admin/v1/standin does, audited the same way.
import type { FastifyInstance } from 'fastify'
import type { StandIn } from '../standin/stand-in.js'
import type { ConsoleOptions, QueueSection } from './deps.js'
import { BASE, Csrf, ReasonField, isoOf, type Viewer } from './html.js'
import { minor } from './words.js'
import { oneOf, reasonOf } from './forms.js'
import { actionFailure } from './actions.js'
import { auditContext } from '../http/admin-auth.js'
import { forceStandIn } from '../http/standin-routes.js'

const STATE_WORDS = {
  standby: 'Standby: deciding with the store.',
  active: 'Active: the store cannot be reached (or stand-in is forced on); approvals follow the stand-in policy\'s caps.',
  replaying: 'Replaying: the store answers again; stand-in approvals are being written into the books.'
} as const

const FORCES = ['on', 'off', 'end'] as const
const FORCED_WORDS: Record<typeof FORCES[number], string> = {
  on: 'Stand-in forced on on this instance: it decides by the stand-in policy without asking the store, and replays nothing until the forcing ends.',
  off: 'Stand-in forced off on this instance: an unreachable store is answered 05.',
  end: 'Stand-in forcing ended on this instance: it follows the store\'s evidence again (a backlog is replayed).'
}

function ForceForm ({ viewer }: { viewer: Viewer }): ReturnType<typeof Csrf> {
  return (
    <form class='action' method='post' action={`${BASE}/queues/standin/force`} aria-label='Force stand-in on this instance'>
      <Csrf viewer={viewer} />
      <label for='standin-force'>Force on this instance
        <select id='standin-force' name='force'>
          <option value='on'>on: decide by the policy, without the store</option>
          <option value='off'>off: never in stand-in</option>
          <option value='end'>end the forcing</option>
        </select>
      </label>
      <ReasonField id='standin-reason' />
      <button type='submit'>Apply</button>
    </form>
  )
}

export function standInSection (standIn: StandIn): QueueSection {
  return {
    id: 'standin',
    title: 'Stand-in',
    render: async (viewer) => {
      const s = standIn.status()
      return (
        <div>
          <p>{STATE_WORDS[s.state]}</p>
          <dl>
            <dt>Forced</dt><dd>{s.forced === null ? 'no' : `${s.forced.on ? 'on' : 'off'} by ${s.forced.keyId ?? 'unknown'} at ${isoOf(s.forced.atMs)}: ${s.forced.reason}`}</dd>
            <dt>Since</dt><dd>{s.sinceMs === null ? 'no outage open' : isoOf(s.sinceMs)}</dd>
            <dt>This outage</dt><dd>{`${s.decisions.approved} approved (${minor(s.amount)}), ${s.decisions.declined} declined`}</dd>
            <dt>Not yet replayed</dt><dd>{`${s.replayBacklog.count} (${minor(s.replayBacklog.amount)})`}</dd>
            <dt>Replayed since start</dt><dd>{Object.entries(s.replayed).map(([k, v]) => `${k} ${v}`).join(', ')}</dd>
          </dl>
          {viewer.scopes.has('standin') && <ForceForm viewer={viewer} />}
        </div>
      )
    },
    routes: async (app: FastifyInstance, opts: ConsoleOptions) => {
      // the scope is checked by the console's onRequest hook, before the body is read
      app.post('/queues/standin/force', { config: { scope: 'standin' } }, async (request, reply) => {
        try {
          const reason = reasonOf(request.body)
          const force = oneOf(request.body, 'force', FORCES)
          const on = force === 'on' ? true : force === 'off' ? false : null
          await forceStandIn(standIn, opts.store, request, on, reason, { ...auditContext(request, { force }), reason })
          request.session.set('flash', { kind: 'ok', text: FORCED_WORDS[force] })
        } catch (err) {
          request.session.set('flash', actionFailure(err, request))
        }
        return await reply.redirect(`${BASE}/queues#standin`, 303)
      })
    }
  }
}
