// Keys remembers the last urn's tag and key part (a decision asks for several keys of one customer in a row):
// whatever order urns come in, every key is the one a Keys that never saw another urn gives.
import t from 'tap'
import { randomInt } from 'node:crypto'
import { Keys, REF_INDEX_SHARDS, bucketOf, part, refIndexOf, refShard } from '../../src/store/keys.js'

const urns = ['U1', 'U2', 'U%2:x', 'U:3', 'U1', 'ü-4', 'U2']
const keysOf = (k: Keys, urn: string): string[] => [
  k.customer(urn), k.cards(urn), k.decision(urn, 'TRN:1'), k.stream(urn), k.cardControls(urn, '4321'),
  k.controlDaily(urn, '4321', 'POS', '20260101'), k.lifecycleIndex(urn), refIndexOf(k.stream(urn), 'TRN:1'),
  k.limit(urn, '4321', { ruleId: 'r', per: 'card' }), k.limit(urn, '4321', { ruleId: 'r', per: 'urn' })
]

t.test('interleaved urns get their own keys', async (t) => {
  const shared = new Keys('p:')
  for (let round = 0; round < 3; round++) {
    for (const urn of urns) {
      const got = keysOf(shared, urn)
      t.same(got, keysOf(new Keys('p:'), urn), `${urn}, round ${round}`)
      t.ok(got[0]?.startsWith(`p:{b${bucketOf(urn)}}:c:`), 'the urn\'s own bucket')
    }
  }
  t.equal(shared.customer('U:3'), `p:{b${bucketOf('U:3')}}:c:U%3A3`, 'the urn escaped in the key')
})

/** the reference index's sum as its Lua twin does it: over the UTF-8 bytes (refIndex in lua/includes/common.lua) */
function shardOfBytes (referencePart: string): number {
  let h = 0
  for (const b of Buffer.from(referencePart, 'utf8')) h = (h * 31 + b) % 65521
  return h % REF_INDEX_SHARDS
}

t.test('refShard sums the UTF-8 bytes, whatever characters the reference has', async (t) => {
  const alphabet = ['A', 'z', '7', ':', '%', '-', ' ', 'É', 'ü', '€', '漢', '😀', '\u007f', '\u0080']
  const seen = new Set<number>()
  for (let i = 0; i < 2000; i++) {
    const ref = Array.from({ length: randomInt(1, 40) }, () => alphabet[randomInt(alphabet.length)]).join('')
    const got = refShard(part(ref))
    if (got !== shardOfBytes(part(ref))) t.fail(`${JSON.stringify(ref)}: ${got} against ${shardOfBytes(part(ref))}`)
    seen.add(got)
  }
  t.equal(seen.size, REF_INDEX_SHARDS, 'the references fall in every hash')
  t.equal(refShard('TRN1'), shardOfBytes('TRN1'))
  const k = new Keys('p:')
  t.equal(refIndexOf(k.stream('U:3'), 'TRN:É'), k.refIndex(bucketOf('U:3'), shardOfBytes('TRN%3AÉ')), 'the hash of the urn\'s bucket and the escaped reference')
})
