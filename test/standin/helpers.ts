// Stand-in tests' helpers: a policy file, and a store that can be made unreachable (every call refused
// before it runs, as the Redis store does while disconnected) or unsure (every call's outcome unknown).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ERR_STORE_NOT_DONE, ERR_STORE_OUTCOME_UNKNOWN } from '../../src/errors.js'
import type { AuthorizeInput, AuthorizeResult, Store } from '../../src/store/types.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export const POLICY = {
  channels: {
    POS: { enabled: true, perTransactionMax: '200000' },
    'POS-Contactless': { enabled: true, perTransactionMax: '500000' },
    ECOM: { enabled: false },
    ATM: { enabled: false }
  },
  perCard: { count: 5, amount: '1000000' },
  perInstance: { amount: '100000000' },
  blockedMcc: ['7995', '6051']
}

/** A temporary folder, removed at teardown. */
export function tempDir (t: Teardown, prefix = 'extauth-standin-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

/** The policy (POLICY with `over` merged at the top level) in a file of its own. */
export function policyFile (t: Teardown, over: Record<string, unknown> = {}): string {
  const path = join(tempDir(t), 'standin.json')
  writeFileSync(path, JSON.stringify({ ...POLICY, ...over }))
  return path
}

export type Reach = 'up' | 'down' | 'unsure'

export interface SwitchedStore {
  store: Store
  set: (reach: Reach) => void
  /** authorize calls that reached the inner store */
  authorizeCalls: () => number
}

/** The store, reachable or not at the test's word. */
export function switchedStore (inner: Store): SwitchedStore {
  let reach: Reach = 'up'
  let calls = 0
  const store = new Proxy(inner, {
    get (target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown
      if (prop === 'ready') return () => reach === 'up'
      if (typeof v !== 'function') return v
      const fn = (v as (...a: unknown[]) => unknown).bind(target)
      if (prop === 'close' || prop === 'kind') return fn
      // the memory store's own readers (its audit trail, its journal) are not store calls: they pass
      if (prop === 'auditRecords' || prop === 'decisionRecords') return fn
      // nor are the state the memory settlement's steps work on (src/settlement/memory-settlement.ts)
      if (prop === 'clock' || prop === 'emit' || prop === 'getRecord' || prop === 'putRecord' || prop === 'holdMember' || prop === 'audit') return fn
      return async (...args: unknown[]) => {
        if (reach === 'down') throw new ERR_STORE_NOT_DONE('redis is reconnecting')
        if (reach === 'unsure') throw new ERR_STORE_OUTCOME_UNKNOWN('Command timed out')
        if (prop === 'authorize') calls++
        return await fn(...args)
      }
    }
  })
  return { store, set: (r) => { reach = r }, authorizeCalls: () => calls }
}

/** The store with its authorize calls made by `authorize`, which is given the store itself; every other call as it is. */
export function withAuthorize (inner: Store, authorize: (input: AuthorizeInput, store: Store) => Promise<AuthorizeResult>): Store {
  return new Proxy(inner, {
    get (target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown
      if (prop !== 'authorize') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      return async (i: AuthorizeInput) => await authorize(i, target)
    }
  })
}
