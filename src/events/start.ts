// Wires the relay to the store the configuration chose, when WEBHOOK_URL is set. With EVENTS_RELAY=false the
// relay is built but never started: the instance writes events and serves the parked list, others send.
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Store } from '../store/types.js'
import type { Metrics } from '../metrics.js'
import { MemoryStore } from '../store/memory.js'
import { RedisStore } from '../store/redis.js'
import { MemoryOutbox, RedisOutbox, type Outbox } from './outbox.js'
import { Relay } from './relay.js'
import { createWebhookSender } from './webhook.js'
import { createEventMetrics } from './metrics.js'

export function startEvents (config: Config, store: Store, metrics: Metrics, log: Logger): { relay: Relay, stop: () => Promise<void> } | undefined {
  const w = config.webhook
  if (w === undefined) return undefined
  let outbox: Outbox
  // a connection of its own: a sweep's 1,024 commands never queue ahead of a decision's script
  let own: RedisStore['client'] | null = null
  if (store instanceof RedisStore) outbox = new RedisOutbox(own = store.client.duplicate(), config.redisKeyPrefix)
  else if (store instanceof MemoryStore) outbox = new MemoryOutbox(store)
  else return undefined
  const sender = createWebhookSender({ url: w.url, secret: w.secret })
  const relay = new Relay({
    outbox,
    send: sender.send,
    metrics: createEventMetrics(metrics.registry),
    log: log.child({ part: 'events' }),
    sendsMax: w.sendsMax,
    ...(w.types !== undefined ? { types: new Set(w.types) } : {})
  })
  store.onEvent = (bucket) => { relay.hint(bucket) }
  if (own !== null) {
    // its failures show in the relay's own warnings; ioredis reconnects by itself
    own.on('error', () => {})
    if (w.relay) own.once('ready', () => { relay.start() })
    own.connect().catch((err: unknown) => { log.warn({ err: (err as Error).message }, 'events: the relay\'s Redis connection failed; retrying') })
  } else if (w.relay) {
    relay.start()
  }
  return {
    relay,
    stop: async () => {
      store.onEvent = null
      await relay.stop()
      await sender.close()
      own?.disconnect()
    }
  }
}
