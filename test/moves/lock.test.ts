// withLock: a holder that outlived its lock releases nothing that is not its own.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { MemoryStore } from '../../src/store/memory.js'
import { LifecycleConflict } from '../../src/moves/errors.js'
import { withLock } from '../../src/moves/records.js'

t.test('a slow first holder does not release the lock a second caller took after it expired', async (t) => {
  const store = new MemoryStore()
  const id = `L${process.pid}`
  await withLock(store, 'transfer', id, async () => {
    // the first holder is slow: its 1 ms lock expires and someone else takes the reference
    for (let i = 0; i < 500; i++) {
      if (await store.lockLifecycle('transfer', id, 60_000, 'second')) return
      await sleep(2)
    }
    t.fail('the expired lock was never free')
  }, 1)
  t.equal(await store.lockLifecycle('transfer', id, 60_000, 'third'), false, 'the second caller still holds the lock')
  await t.rejects(withLock(store, 'transfer', id, async () => 'ran'), LifecycleConflict)
  t.equal(await store.unlockLifecycle('transfer', id, 'second'), true)
  t.equal(await withLock(store, 'transfer', id, async () => 'ran'), 'ran')
})

t.test('a lock that cannot be released does not turn a finished call into an error', async (t) => {
  const store = new MemoryStore()
  const failing = Object.assign(Object.create(store) as MemoryStore, { unlockLifecycle: async () => { throw new Error('store went away') } })
  t.equal(await withLock(failing, 'load', 'X', async () => 'done'), 'done')
})
