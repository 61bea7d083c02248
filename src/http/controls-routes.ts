// The card controls (docs/api/card-controls.md) on the admin listener: what the client's app calls when the
// cardholder flips a switch or sets a limit. Shares the admin listener's bearer check and error answers.
import type { FastifyInstance } from 'fastify'
import type { Store } from '../store/types.js'
import { effectiveControls, type CardControls } from '../controls/types.js'
import { parseControls } from '../controls/validate.js'
import { last4Param, urnParam } from './admin-routes.js'

export interface ControlsRoutesOptions {
  store: Store
  /** the program's defaults (CARD_CONTROLS_FILE) */
  defaults: CardControls
}

const PATH = '/admin/v1/customers/:urn/cards/:last4/controls'
const params = { type: 'object', properties: { urn: urnParam, last4: last4Param } }

export async function controlsRoutes (app: FastifyInstance, opts: ControlsRoutesOptions): Promise<void> {
  const { store, defaults } = opts

  app.get<{ Params: { urn: string, last4: string } }>(PATH, { schema: { params } }, async (request) => {
    const { urn, last4 } = request.params
    return effectiveControls(await store.getCardControls(urn, last4), defaults)
  })

  app.patch<{ Params: { urn: string, last4: string }, Body: unknown }>(PATH, { schema: { params } }, async (request, reply) => {
    const { urn, last4 } = request.params
    const parsed = parseControls(request.body)
    if (!parsed.ok) {
      reply.code(400)
      return { error: 'VALIDATION', message: parsed.field === '' ? `body ${parsed.message}` : `${parsed.field} ${parsed.message}`, field: parsed.field }
    }
    const { before, after } = await store.patchCardControls(urn, last4, parsed.entries)
    const was = effectiveControls(before, defaults)
    const now = effectiveControls(after, defaults)
    // the cardholder is notified of every change (card.controls.updated, with the decision events)
    request.log.info({ urn, last4, before: was, after: now }, 'card controls updated')
    return now
  })
}
