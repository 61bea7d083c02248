// Customers known to extauth and to the simulated platform with the same balances, on the store a test
// names, and both sides' balances read together.
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import type { Sims } from './sims.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export const STORE_KINDS = ['memory', 'redis'] as const

export async function storeOf (t: Teardown, kind: typeof STORE_KINDS[number]): Promise<Store> {
  return kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
}

/** Each urn as a customer here (customerId `C<urn>`) and a wallet `ACC-<urn>` on the platform, with its balance on both. */
export async function seedWallets (sims: Sims, store: Store, balances: Record<string, number>): Promise<void> {
  for (const [urn, balance] of Object.entries(balances)) {
    sims.prepaid.wallets.add({ urn, customerId: `C${urn}`, accountNumber: `ACC-${urn}`, balance })
    await store.putCustomer(urn, { customerId: `C${urn}` })
    if (balance > 0) await store.credit(urn, balance, `seed-${urn}`)
  }
}

/** `<urn>`: the available balance here; `platform<urn>`: the wallet's on the platform (-1: unknown). */
export async function walletBalances (sims: Sims, store: Store, urns: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const urn of urns) {
    out[urn] = (await store.getCustomer(urn))?.available ?? -1
    out[`platform${urn}`] = sims.prepaid.wallets.customer(urn)?.balance ?? -1
  }
  return out
}
