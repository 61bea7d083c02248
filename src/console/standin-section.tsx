// The stand-in section of the queues page (docs/operations/standin.md): whether this instance decides without
// the store, this outage's decisions and what is still to be replayed into the books. Read only: forcing
// stand-in on or off is POST /admin/v1/standin, with the `standin` scope and a reason.
import type { StandIn } from '../standin/stand-in.js'
import type { QueueSection } from './deps.js'
import { isoOf } from './html.js'
import { minor } from './words.js'

const STATE_WORDS = {
  standby: 'Standby: deciding with the store.',
  active: 'Active: the store cannot be reached (or stand-in is forced on); approvals follow the stand-in policy\'s caps.',
  replaying: 'Replaying: the store answers again; stand-in approvals are being written into the books.'
} as const

export function standInSection (standIn: StandIn): QueueSection {
  return {
    id: 'standin',
    title: 'Stand-in',
    render: async () => {
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
        </div>
      )
    }
  }
}
