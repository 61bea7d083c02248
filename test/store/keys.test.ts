// Keys remembers the last urn's tag and key part (a decision asks for several keys of one customer in a row):
// whatever order urns come in, every key is the one a Keys that never saw another urn gives.
import t from 'tap'
import { Keys, bucketOf } from '../../src/store/keys.js'

const urns = ['U1', 'U2', 'U%2:x', 'U:3', 'U1', 'ü-4', 'U2']
const keysOf = (k: Keys, urn: string): string[] => [
  k.customer(urn), k.cards(urn), k.decision(urn, 'TRN:1'), k.stream(urn), k.cardControls(urn, '4321'),
  k.controlDaily(urn, '4321', 'POS', '20260101'), k.lifecycleIndex(urn),
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
