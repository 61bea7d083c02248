// The customers, cards and references a run draws from. Urns and references carry ':' '|' and spaces, and
// two pairs of customers are chosen so that (urn X, reference "N:R") and (urn "X:N", reference "R") would
// meet if urn and reference were joined with a bare separator: two customers must never share a thing.
import { bucketOf } from '../../../src/store/keys.js'
import type { Random } from '../../../src/sim/prng.js'
import { intBetween, pick } from '../../../src/sim/prng.js'

export interface WorldCustomer {
  urn: string
  cards: string[]
  opening: number
}

export interface CollidingPair {
  /** urn X; its references are `${suffix}:${base}` */
  short: string
  /** urn `X:${suffix}`; its references are `${base}` */
  long: string
  suffix: string
}

export interface World {
  customers: WorldCustomer[]
  /** an urn no customer has: decisions answer 14 */
  unknownUrn: string
  pairs: CollidingPair[]
}

/** A suffix that puts `X:suffix` in the same key bucket as X, so their keys could meet in one store slot. */
function sameBucketSuffix (short: string): string {
  for (let n = 100; n < 1_000_000; n++) {
    if (bucketOf(`${short}:${n}`) === bucketOf(short)) return String(n)
  }
  throw new Error(`no suffix found for ${short}`)
}

export function buildWorld (rnd: Random, colliding: boolean): World {
  const customers: WorldCustomer[] = []
  const add = (urn: string, cards: string[]): void => {
    customers.push({ urn, cards, opening: intBetween(rnd, 0, 20_000) })
  }
  add('U1', ['1111', '2222'])
  add('U|2', ['3333'])
  add('U 3', [])
  add('U4:x', ['4444', '5555'])
  add('U5', [])
  const pairs: CollidingPair[] = []
  if (colliding) {
    for (const short of ['A', 'K|']) {
      const suffix = sameBucketSuffix(short)
      const long = `${short}:${suffix}`
      add(short, [])
      add(long, [])
      pairs.push({ short, long, suffix })
    }
  }
  return { customers, unknownUrn: 'ZZ:404', pairs }
}

export const CHANNELS = ['POS', 'ECOM', 'ATM', 'POS-Contactless'] as const

export function pickCustomer (rnd: Random, w: World): WorldCustomer {
  return pick(rnd, w.customers)
}

/** A card of the customer; sometimes one it does not have. */
export function pickLast4 (rnd: Random, c: WorldCustomer): string {
  if (c.cards.length === 0 || rnd() < 0.04) return pick(rnd, ['1111', '9999', '4444'])
  return pick(rnd, c.cards)
}

/** A reference with separators in it. */
export function newReference (rnd: Random, n: number): string {
  return pick(rnd, [`R${n}`, `R:${n}`, `R|${n}`, `R ${n}:x`, `${n}:R`])
}
