// ADMIN_KEYS_FILE (docs/operations/admin-access.md): what a file may hold, each refusal naming the entry;
// the keyring's lookup (file keys with their scopes, ADMIN_TOKEN with all); rotation by reloading the file,
// a bad file on reload keeping the keys in use.
import t from 'tap'
import { parseAdminKeys, AdminKeysError } from '../../src/access/keys-file.js'
import { Keyring } from '../../src/access/keyring.js'
import { SCOPES } from '../../src/access/scopes.js'
import { keysFile, keysFileText, sha256Hex } from '../helpers/admin-keys.js'

const A = { id: 'backoffice-2026-11', key: 'key-A-3c6f0e9a1b2d4c5e', scopes: ['read', 'money:write'] as const }
const B = { id: 'app-controls', key: 'key-B-8d7c6b5a4f3e2d1c', scopes: ['controls:write'] as const }

function refusedWith (text: string): string {
  try {
    parseAdminKeys(text, 'keys.json')
  } catch (err) {
    if (err instanceof AdminKeysError) return err.message
    throw err
  }
  return 'accepted'
}

t.test('a good file: ids, hashes, scopes', async (t) => {
  const keys = parseAdminKeys(keysFileText([{ ...A, scopes: [...A.scopes] }, { ...B, scopes: [...B.scopes] }]), 'keys.json')
  t.same(keys.map((k) => [k.id, k.sha256.toString('hex'), [...k.scopes]]), [
    [A.id, sha256Hex(A.key), ['read', 'money:write']],
    [B.id, sha256Hex(B.key), ['controls:write']]
  ])
  t.equal(parseAdminKeys(JSON.stringify([{ id: 'x', sha256: sha256Hex('k').toUpperCase(), scopes: ['read'] }]), 'f')[0]?.sha256.toString('hex'), sha256Hex('k'), 'upper-case hex is read')
})

t.test('a bad file is refused, naming the entry and the fault', async (t) => {
  const entry = (over: Record<string, unknown>): string => JSON.stringify([{ id: 'k1', sha256: sha256Hex('one'), scopes: ['read'] }, { id: 'k2', sha256: sha256Hex('two'), scopes: ['read'], ...over }])
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', '[{"id":', /^keys\.json: is not JSON/],
    ['not an array', '{"id":"k"}', /JSON array/],
    ['empty', '[]', /at least one/],
    ['an entry not an object', '["k"]', /entry 0: must be an object/],
    ['short hex', entry({ sha256: 'abc' }), /entry 1 \(k2\): sha256 must be 64 hex digits/],
    ['not hex', entry({ sha256: 'z'.repeat(64) }), /entry 1 \(k2\): sha256 must be 64 hex/],
    ['unknown scope', entry({ scopes: ['read', 'admin'] }), /entry 1 \(k2\): unknown scope admin; known: read, customers:write/],
    ['no scopes', entry({ scopes: [] }), /entry 1 \(k2\): scopes must be a non-empty array/],
    ['duplicate id', entry({ id: 'k1' }), /entry 1 \(k1\): duplicate id/],
    ['duplicate hash', entry({ sha256: sha256Hex('one') }), /entry 1 \(k2\): the same key \(sha256\) as an earlier entry/],
    ['the key itself', entry({ key: 'two' }), /entry 1: unknown field key/],
    ['a bad id', entry({ id: 'has space' }), /entry 1: id must be/],
    ['the id of ADMIN_TOKEN', entry({ id: 'ADMIN_TOKEN' }), /the id ADMIN_TOKEN is the one of ADMIN_TOKEN/],
    ['the empty key', entry({ sha256: sha256Hex('') }), /the one of an empty key/]
  ]
  for (const [label, text, want] of cases) t.match(refusedWith(text), want, label)
})

t.test('lookup: a file key has its scopes, ADMIN_TOKEN every scope; anything else is no key', async (t) => {
  const file = keysFile(t, [{ ...A, scopes: [...A.scopes] }, { ...B, scopes: [...B.scopes] }])
  const ring = new Keyring('the-admin-token-value', file.path)
  t.equal(ring.size, 3)
  t.same(ring.find(A.key) && [ring.find(A.key)?.id, [...(ring.find(A.key)?.scopes ?? [])]], [A.id, ['read', 'money:write']])
  t.equal(ring.find(B.key)?.id, B.id)
  t.same([...(ring.find('the-admin-token-value')?.scopes ?? [])], [...SCOPES], 'ADMIN_TOKEN: every scope')
  t.equal(ring.find('the-admin-token-value')?.id, 'ADMIN_TOKEN')
  for (const wrong of ['', A.key + 'x', A.key.slice(0, -1), sha256Hex(A.key)]) t.equal(ring.find(wrong), null, `"${wrong.slice(0, 12)}…": no key (the hash itself is not the key)`)
  t.equal(new Keyring('', '').size, 0, 'neither: no key at all (no admin listener)')
  t.throws(() => new Keyring(A.key, file.path), /is ADMIN_TOKEN itself/, 'a file key equal to ADMIN_TOKEN is refused')
})

t.test('rotation: the new key added, both work; the old one removed; a bad file keeps the keys in use', async (t) => {
  const old = { id: 'backoffice-2026-10', key: 'key-old-5a4b3c2d1e0f', scopes: ['read' as const] }
  const next = { id: 'backoffice-2026-11', key: 'key-new-0f1e2d3c4b5a', scopes: ['read' as const] }
  const file = keysFile(t, [old])
  const ring = new Keyring('', file.path)
  t.equal(ring.find(next.key), null, 'before: the new key is unknown')
  file.write([old, next])
  t.same(ring.reload(), { ok: true, keys: 2 })
  t.equal(ring.find(old.key)?.id, old.id, 'during: the old key works')
  t.equal(ring.find(next.key)?.id, next.id, 'during: the new key works')
  file.write([next])
  t.same(ring.reload(), { ok: true, keys: 1 })
  t.equal(ring.find(old.key), null, 'after: the old key is refused')
  t.equal(ring.find(next.key)?.id, next.id)
  file.write('[{"id": "broken"')
  const r = ring.reload()
  t.match(r, { ok: false, error: /is not JSON/ }, 'a bad file: refused with the reason')
  t.equal(ring.find(next.key)?.id, next.id, 'and the keys in use stay')
})
