// The platformIds an import has seen, for duplicates within a statement: a set of 53-bit hashes kept in one
// Float64Array by open addressing. A Set<number> of a million such numbers (beyond the small integers, each a
// heap number) takes about ten times the memory, and its growth is what a statement's check pass cost in RSS
// (docs/development/performance.md, Statement import).

/** slots per entry at most before the table doubles (a load of one half) */
const GROWTH_LOAD = 0.5
const SLOTS_MIN = 1024

export class HashSet53 {
  /** each slot 0 (empty) or the hash plus one */
  private slots = new Float64Array(SLOTS_MIN)
  private count = 0

  /** adds h (a whole number below 2^53); true when it was there already */
  add (h: number): boolean {
    if ((this.count + 1) > this.slots.length * GROWTH_LOAD) this.grow()
    const had = HashSet53.put(this.slots, h + 1)
    if (!had) this.count++
    return had
  }

  get size (): number {
    return this.count
  }

  clear (): void {
    this.slots = new Float64Array(SLOTS_MIN)
    this.count = 0
  }

  private grow (): void {
    const old = this.slots
    this.slots = new Float64Array(old.length * 2)
    for (const v of old) if (v !== 0) HashSet53.put(this.slots, v)
  }

  /** linear probing from the value's low bits (the hashes are FNV-1a: their low bits are spread) */
  private static put (slots: Float64Array, v: number): boolean {
    const mask = slots.length - 1
    let i = (v % 0x40000000) & mask
    for (;;) {
      const s = slots[i] as number
      if (s === 0) { slots[i] = v; return false }
      if (s === v) return true
      i = (i + 1) & mask
    }
  }
}
