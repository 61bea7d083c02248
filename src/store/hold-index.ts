// The embedded store's hold index, as the Redis store's '<stream>:h' sorted sets: each open hold by its
// expiry, so that expiry reads only what is due (binary search, no scan of what is held).
export interface DueHold { member: string, expiresAtMs: number }

export class HoldIndex {
  /** ordered by expiry, then member */
  private readonly sorted: DueHold[] = []
  private readonly byMember = new Map<string, number>()
  /** what each open hold holds (the Redis store's '<stream>:ha'), so that expiry releases it even when its decision is gone */
  private readonly amounts = new Map<string, number>()
  /**
   * the decidedAtMs of the decision whose hold each member is (the Redis store's '<member>:d'): the member's
   * decision key may hold another decision by the time it expires, whose hold it is not
   */
  private readonly decided = new Map<string, number>()

  private position (h: DueHold): number {
    let lo = 0
    let hi = this.sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const m = this.sorted[mid] as DueHold
      if (m.expiresAtMs < h.expiresAtMs || (m.expiresAtMs === h.expiresAtMs && m.member < h.member)) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  add (member: string, expiresAtMs: number, amount: number, decidedAtMs: number): void {
    this.remove(member)
    this.amounts.set(member, amount)
    this.decided.set(member, decidedAtMs)
    const h = { member, expiresAtMs }
    this.sorted.splice(this.position(h), 0, h)
    this.byMember.set(member, expiresAtMs)
  }

  has (member: string): boolean {
    return this.byMember.has(member)
  }

  expiryOf (member: string): number | undefined {
    return this.byMember.get(member)
  }

  remove (member: string): boolean {
    const at = this.byMember.get(member)
    if (at === undefined) return false
    const i = this.position({ member, expiresAtMs: at })
    this.sorted.splice(i, 1)
    this.byMember.delete(member)
    this.amounts.delete(member)
    this.decided.delete(member)
    return true
  }

  /** when the decision whose hold it is was decided */
  decidedAtOf (member: string): number | undefined {
    return this.decided.get(member)
  }

  amountOf (member: string): number {
    return this.amounts.get(member) ?? 0
  }

  setAmount (member: string, amount: number): void {
    if (this.byMember.has(member)) this.amounts.set(member, amount)
  }

  /** the first `max` holds due at `asOfMs` (expiry at or before it), earliest first */
  due (asOfMs: number, max: number): DueHold[] {
    const out: DueHold[] = []
    for (const h of this.sorted) {
      if (h.expiresAtMs > asOfMs || out.length >= max) break
      out.push(h)
    }
    return out
  }

  get size (): number {
    return this.sorted.length
  }
}
