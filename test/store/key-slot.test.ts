// The slot computation the Redis tests rely on, held against values a Redis server gives. The same function
// is checked against a live cluster's CLUSTER KEYSLOT in cluster.test.ts.
import t from 'tap'
import { crc16, keySlot } from '../helpers/key-slot.js'

t.test('CRC16 is the XMODEM variant of the Redis Cluster specification', async (t) => {
  t.equal(crc16(Buffer.from('123456789')), 0x31c3, 'the specification\'s check value')
  t.equal(crc16(new Uint8Array()), 0)
})

t.test('slots as CLUSTER KEYSLOT answers them (redis-server 7.0, cluster-enabled)', async (t) => {
  const answered: Array<[string, number]> = [
    ['somekey', 11058],
    ['123456789', 12739],
    ['foo{hash_tag}', 2515],
    ['bar{hash_tag}', 2515],
    ['{user1000}.following', 3443],
    // an empty tag hashes the whole key; only the first `{` and the first `}` after it count
    ['{}foo', 9500],
    ['foo{}{bar}', 8363],
    ['foo{{bar}}zap', 4015],
    ['foo{bar}{zap}', 5061],
    // bytes, not UTF-16 code units
    ['ü{é}x', 10180]
  ]
  for (const [key, slot] of answered) t.equal(keySlot(key), slot, key)
})

t.test('keys with the same tag share a slot; the tag alone decides it', async (t) => {
  t.equal(keySlot('p:{b17}:c:U1'), keySlot('b17'))
  t.equal(keySlot('p:{b17}:c:U1'), keySlot('other:{b17}:s'))
  t.not(keySlot('p:{b17}:c:U1'), keySlot('p:{b18}:c:U1'))
})
