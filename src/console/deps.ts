// What the console's pages read and act through: the same store, journal, audit trail, rules and relay the
// admin API uses (passed in by app.ts), never copies of their logic.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Keyring } from '../access/keyring.js'
import type { AuditReader } from '../access/audit-trail.js'
import type { JournalReader } from '../journal/source.js'
import type { Store } from '../store/types.js'
import type { RulesControl } from '../http/admin-routes.js'
import type { Relay } from '../events/relay.js'
import type { Metrics } from '../metrics.js'
import type { CardControls } from '../domain/controls.js'
import type { VNode } from 'preact'
import type { Viewer } from './html.js'

/**
 * A section of the queues page: what waits for an operator. Parked events are built in; reconciliation
 * exceptions and stand-in state add their own section here.
 */
export interface QueueSection {
  id: string
  title: string
  render: (viewer: Viewer) => Promise<VNode>
  /** the section's actions (POST routes under the console, each with its scope) */
  routes?: (app: FastifyInstance, opts: ConsoleOptions) => Promise<void>
}

export interface ConsoleOptions {
  keys: Keyring
  store: Store
  rules: RulesControl
  rulesDir: string
  journal: JournalReader | null
  audit: AuditReader | null
  relay?: Relay
  metrics: Metrics
  controlDefaults: CardControls
  /** DEFAULT_CURRENCY: the currency of a backtest report's amounts, as the command prints them */
  defaultCurrency: string
  /** CONSOLE_IDLE_TIMEOUT_MS: a session unused this long is over */
  idleTimeoutMs: number
  /** the admin listener speaks HTTPS: the session cookie is Secure */
  secure: boolean
  /** the admin listener asks for client certificates (ADMIN_TLS_CA): one mapped to a key may sign in */
  clientCerts?: boolean
  /** sessions kept at most (the least recently used go first) */
  sessionsMax?: number
  clock?: () => number
  /** more sections of the queues page */
  queueSections?: QueueSection[]
}

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
