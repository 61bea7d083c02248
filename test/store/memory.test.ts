import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { storeContract } from './contract.js'
import { boundaryContract, latestAttemptContract } from './contract-boundaries.js'
import { lifecycleContract } from './lifecycle-contract.js'
import { auditContract, ctx } from './audit-contract.js'

storeContract(t, async () => new MemoryStore())
boundaryContract(t, async () => new MemoryStore())
latestAttemptContract(t, async () => new MemoryStore())
lifecycleContract(t, async () => new MemoryStore())
auditContract(t, async () => new MemoryStore())

t.test('audit records are kept AUDIT_RETENTION_DAYS', async (t) => {
  let now = Date.parse('2026-11-24T10:00:00Z')
  const day = 24 * 3600_000
  const store = new MemoryStore({ clock: () => now, auditRetentionMs: 2 * day })
  const old = await store.appendAudit({ ...ctx('k', 'X', {}), outcome: 'done', before: null, after: null })
  now += day
  const newer = await store.appendAudit({ ...ctx('k', 'X', {}), outcome: 'done', before: null, after: null })
  t.same(store.auditRecords().map((r) => r.id), [old.id, newer.id], 'within the retention: both')
  now += day + 1
  t.same(store.auditRecords().map((r) => r.id), [newer.id], 'past it: the older one is gone')
})
