// The relay's failures in words an operator can act on. ioredis says "Stream isn't writeable and
// enableOfflineQueue options is false" when the relay's connection is down (its commands are not queued while
// it reconnects); that is the store out of reach, not a fault of the events, and the next sweep tries again.
const CONNECTION_DOWN = [/Stream isn't writeable/i, /Connection is closed/i, /ECONNREFUSED|ECONNRESET|ETIMEDOUT/]

/** The log fields of a failed sweep or bucket pass: a readable cause, and the library's own words beside it. */
export function relayFailure (err: unknown): { err: string, cause?: string } {
  const message = err instanceof Error ? err.message : String(err)
  if (CONNECTION_DOWN.some((re) => re.test(message))) return { err: 'the relay\'s Redis connection is down; it reconnects by itself and the next sweep tries again', cause: message }
  return { err: message }
}
