// Wires the relay to the store the configuration chose, when WEBHOOK_URL is set.
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
  if (store instanceof RedisStore) outbox = new RedisOutbox(store.client, config.redisKeyPrefix)
  else if (store instanceof MemoryStore) outbox = new MemoryOutbox(store)
  else return undefined
  const sender = createWebhookSender({ url: w.url, secret: w.secret })
  const relay = new Relay({
    outbox,
    send: sender.send,
    metrics: createEventMetrics(metrics.registry),
    log: log.child({ part: 'events' }),
    ...(w.types !== undefined ? { types: new Set(w.types) } : {})
  })
  store.onEvent = (bucket) => { relay.hint(bucket) }
  relay.start()
  return {
    relay,
    stop: async () => {
      store.onEvent = null
      await relay.stop()
      await sender.close()
    }
  }
}
