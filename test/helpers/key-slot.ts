// The Redis Cluster slot of a key, computed here rather than asked of a server, so a test on a standalone
// Redis (which refuses CLUSTER KEYSLOT) can still tell whether a script's keys share one slot.
// Redis Cluster specification: HASH_SLOT = CRC16(key) mod 16384, CRC16 being XMODEM (polynomial 0x1021,
// initial value 0), over only the hash tag when the key has one: the bytes between the first `{` and the
// first `}` after it, provided there is at least one byte between them.

export const CLUSTER_SLOTS = 16384

export function crc16 (bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = (crc & 0x8000) !== 0 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc
}

/** The bytes a key hashes by: its hash tag when it has a non-empty one, else the whole key. */
export function hashedPart (key: Uint8Array): Uint8Array {
  const open = key.indexOf(0x7b) // {
  if (open === -1) return key
  const close = key.indexOf(0x7d, open + 1) // }
  if (close === -1 || close === open + 1) return key
  return key.subarray(open + 1, close)
}

export function keySlot (key: string | Uint8Array): number {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key
  return crc16(hashedPart(bytes)) % CLUSTER_SLOTS
}
