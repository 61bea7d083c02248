// Admin keys files for tests: a temporary folder holding ADMIN_KEYS_FILE, removed at the end.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Scope } from '../../src/access/scopes.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface KeySpec { id: string, key: string, scopes: Scope[] }

export function sha256Hex (key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** the file's content for these keys (hashes only, as an operator writes it) */
export function keysFileText (keys: KeySpec[]): string {
  return JSON.stringify(keys.map((k) => ({ id: k.id, sha256: sha256Hex(k.key), scopes: k.scopes })), null, 2)
}

/** A keys file in a temporary folder; `write` replaces its content (rotation). */
export function keysFile (t: Teardown, keys: KeySpec[]): { path: string, write: (keys: KeySpec[] | string) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'extauth-keys-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const path = join(dir, 'admin-keys.json')
  const write = (k: KeySpec[] | string): void => { writeFileSync(path, typeof k === 'string' ? k : keysFileText(k)) }
  write(keys)
  return { path, write }
}
