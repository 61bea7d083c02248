// How long a decision that is a hold is kept: past its expiry by the decision retention, so that a clearing
// arriving after expiry still finds its authorization (docs/operations/settlement.md).
export function holdTtlMs (ttlMs: number, input: { nowMs: number, holdExpiresAtMs?: number }, retentionMs: number): number {
  if (input.holdExpiresAtMs === undefined) return ttlMs
  return Math.max(ttlMs, input.holdExpiresAtMs - input.nowMs + retentionMs)
}
