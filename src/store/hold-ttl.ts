// How long the decision of a hold is kept: its usual time past the hold's expiry, so that a clearing arriving
// after expiry still finds its authorization (docs/operations/settlement.md). Only an approval that holds
// something is kept longer (the authorize script does the same).
export function holdTtlMs (ttlMs: number, input: { nowMs?: number, holdExpiresAtMs?: number }): number {
  if (input.holdExpiresAtMs === undefined || input.nowMs === undefined) return ttlMs
  return ttlMs + Math.max(0, input.holdExpiresAtMs - input.nowMs)
}
