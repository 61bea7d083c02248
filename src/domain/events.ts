// The event vocabulary (docs/api/events.md), shared by the store's outbox, the relay and the configuration.
// Imports nothing of ours.
export const EVENT_TYPES = [
  'decision.created', 'decision.reversed', 'decision.released', 'funds.credited', 'funds.debited',
  'customer.updated', 'card.updated', 'card.controls.updated', 'load.completed', 'transfer.completed', 'unload.completed',
  'audit.recorded', 'settlement.posted', 'authorization.expired', 'reconciliation.exception', 'reconciliation.resolved'
] as const
export type EventType = typeof EVENT_TYPES[number]

/**
 * EVENTS_BACKLOG_MAX: undelivered events kept in all; each bucket's stream holds its share. Past it the
 * oldest are dropped (and counted): a bound on Redis memory while the receiver is down.
 */
export const EVENTS_BACKLOG_MAX_DEFAULT = 1_000_000

/** A Standard Webhooks secret: whsec_ and base64 of at least 16 bytes. */
export function isWebhookSecret (secret: string): boolean {
  if (!secret.startsWith('whsec_')) return false
  const b64 = secret.slice(6)
  return /^[A-Za-z0-9+/]+={0,2}$/.test(b64) && b64.length % 4 === 0 && Buffer.from(b64, 'base64').length >= 16
}
