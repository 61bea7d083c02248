// The card controls (docs/api/card-controls.md) on the admin listener: what the client's app calls when the
// cardholder flips a switch or sets a limit. Shares the admin listener's bearer check and error answers.
import type { FastifyInstance } from 'fastify'
import type { Store } from '../store/types.js'
import { effectiveControls, type CardControls, type ControlEntries } from '../domain/controls.js'
import { controlsProblem, controlsSchema } from '../controls/validate.js'
import { apiError } from '../errors.js'
import { last4Param, urnParam } from './admin-routes.js'
import { auditContext } from './admin-auth.js'
import { TAGS } from './openapi.js'
import { controlsAnswer, controlsRefused } from './answer-docs.js'

export interface ControlsRoutesOptions {
  store: Store
  /** the program's defaults (CARD_CONTROLS_FILE) */
  defaults: CardControls
}

const PATH = '/admin/v1/customers/:urn/cards/:last4/controls'
const params = { type: 'object', properties: { urn: urnParam, last4: last4Param } }

export async function controlsRoutes (app: FastifyInstance, opts: ControlsRoutesOptions): Promise<void> {
  const { store, defaults } = opts

  app.get<{ Params: { urn: string, last4: string } }>(PATH, {
    config: { scope: 'read' },
    schema: {
      tags: [TAGS.controls],
      summary: 'A card\'s effective controls',
      answers: { 200: controlsAnswer },
      errors: ['CUSTOMER_NOT_FOUND', 'CARD_NOT_FOUND'],
      params
    }
  }, async (request) => {
    const { urn, last4 } = request.params
    return effectiveControls(await store.getCardControls(urn, last4), defaults)
  })

  app.patch<{ Params: { urn: string, last4: string }, Body: ControlEntries }>(PATH, {
    config: { scope: 'controls:write' },
    schema: {
      tags: [TAGS.controls],
      summary: 'Change some of a card\'s controls: only the kinds and fields sent; null removes a limit',
      answers: { 200: controlsAnswer, 400: controlsRefused },
      errors: ['CUSTOMER_NOT_FOUND', 'CARD_NOT_FOUND'],
      params,
      body: controlsSchema
    },
    // the listener checks every body strictly ("5000" is not an amount, null is not false); the refusal names the field
    schemaErrorFormatter: (errors, dataVar) => {
      if (dataVar !== 'body') return apiError('VALIDATION', `${dataVar}${errors[0]?.instancePath ?? ''} ${errors[0]?.message ?? 'is not valid'}`)
      const { field, message } = controlsProblem(errors as Parameters<typeof controlsProblem>[0])
      return apiError('VALIDATION', field === '' ? `body ${message}` : `${field} ${message}`, { field })
    }
  }, async (request) => {
    const { urn, last4 } = request.params
    const { before, after } = await store.patchCardControls(urn, last4, request.body, auditContext(request))
    const was = effectiveControls(before, defaults)
    const now = effectiveControls(after, defaults)
    // the cardholder is notified of every change (card.controls.updated, with the decision events)
    request.log.info({ urn, last4, before: was, after: now }, 'card controls updated')
    return now
  })
}
