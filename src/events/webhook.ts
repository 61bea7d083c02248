// Sends one event to WEBHOOK_URL, signed per Standard Webhooks with the scheme's own library: the same
// `webhook-id` (the event's id) on every attempt, a fresh timestamp and signature each time.
import { Webhook } from 'standardwebhooks'
import { Agent, request } from 'undici'
import type { WebhookEvent } from '../store/outbox-entry.js'

export interface SendResult {
  ok: boolean
  /** the receiver's status, or the failure (timeout, refused) */
  detail: string
}

export type Sender = (event: WebhookEvent) => Promise<SendResult>

export interface WebhookSenderOptions {
  url: string
  /** whsec_ followed by base64 */
  secret: string
  timeoutMs?: number
}

export function createWebhookSender (opts: WebhookSenderOptions): { send: Sender, close: () => Promise<void> } {
  const signer = new Webhook(opts.secret)
  const timeoutMs = opts.timeoutMs ?? 10_000
  const dispatcher = new Agent({ connections: 64, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connectTimeout: Math.min(timeoutMs, 5000) })
  const send: Sender = async (event) => {
    const body = JSON.stringify(event)
    const now = new Date()
    try {
      const res = await request(opts.url, {
        method: 'POST',
        dispatcher,
        body,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'webhook-id': event.id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign(event.id, now, body)
        }
      })
      await res.body.dump()
      return { ok: res.statusCode >= 200 && res.statusCode < 300, detail: `HTTP ${res.statusCode}` }
    } catch (err) {
      return { ok: false, detail: (err as NodeJS.ErrnoException).code ?? (err as Error).name }
    }
  }
  return { send, close: async () => { await dispatcher.close() } }
}
