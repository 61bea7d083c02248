// The relay's metrics, registered on the app's registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

export interface EventMetrics {
  written: Counter
  delivered: Counter<'type'>
  retried: Counter
  parked: Counter
  dropped: Counter
  filtered: Counter
  oldestSeconds: Gauge
  deliverySeconds: Histogram
}

export function createEventMetrics (registry: Registry): EventMetrics {
  const registers = [registry]
  const existing = registry.getSingleMetric('extauth_events_written_total')
  if (existing !== undefined) return (registry as unknown as { extauthEvents: EventMetrics }).extauthEvents
  const m: EventMetrics = {
    written: new Counter({ name: 'extauth_events_written_total', help: 'Events this instance wrote to the outbox with their change', registers }),
    delivered: new Counter({ name: 'extauth_events_delivered_total', help: 'Events the receiver accepted (2xx), by type', labelNames: ['type'], registers }),
    retried: new Counter({ name: 'extauth_events_retried_total', help: 'Failed delivery attempts that will be retried', registers }),
    parked: new Counter({ name: 'extauth_events_parked_total', help: 'Events given up on after the retry period, listed in /admin/v1/events/failed', registers }),
    dropped: new Counter({ name: 'extauth_events_dropped_total', help: 'Events dropped undelivered past EVENTS_BACKLOG_MAX', registers }),
    filtered: new Counter({ name: 'extauth_events_filtered_total', help: 'Events not sent because WEBHOOK_EVENTS does not list their type', registers }),
    oldestSeconds: new Gauge({ name: 'extauth_events_oldest_undelivered_seconds', help: 'Age of the oldest event not yet delivered (0: none)', registers }),
    deliverySeconds: new Histogram({
      name: 'extauth_events_delivery_seconds',
      help: 'Time from an event being written to the receiver accepting it',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers
    })
  }
  ;(registry as unknown as { extauthEvents: EventMetrics }).extauthEvents = m
  return m
}
