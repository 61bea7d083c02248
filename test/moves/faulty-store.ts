// A Store that fails one chosen call: the n-th call of a method from when it is armed, either before the
// call reaches the store (nothing happened) or after it did (the change is made, its reply is lost).
import type { Store } from '../../src/store/types.js'

export type FaultyMethod = 'putLifecycle' | 'credit' | 'debit' | 'getLifecycle' | 'recordCompletion'

export interface StoreFault {
  method: FaultyMethod
  /** 1 = the next call of `method` */
  at: number
  when: 'before' | 'after'
}

export class InjectedStoreFault extends Error {
  constructor (readonly fault: StoreFault) {
    super(`injected store fault: ${fault.method} #${fault.at} ${fault.when}`)
    this.name = 'InjectedStoreFault'
  }
}

export interface FaultyStore {
  store: Store
  arm (fault: StoreFault): void
  disarm (): void
  /** whether the armed fault has fired */
  fired (): boolean
}

export function faultyStore (inner: Store): FaultyStore {
  let armed: StoreFault | null = null
  let seen = 0
  let hasFired = false
  const store = new Proxy(inner, {
    get (target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown
      if (typeof v !== 'function') return v
      const fn = (v as (...a: unknown[]) => unknown).bind(target)
      if (armed === null || prop !== armed.method) return fn
      return async (...args: unknown[]) => {
        const fault = armed
        if (fault === null || prop !== fault.method) return await fn(...args)
        seen++
        if (seen !== fault.at) return await fn(...args)
        hasFired = true
        armed = null
        if (fault.when === 'after') await fn(...args)
        throw new InjectedStoreFault(fault)
      }
    }
  })
  return {
    store,
    arm (fault) { armed = fault; seen = 0; hasFired = false },
    disarm () { armed = null },
    fired: () => hasFired
  }
}
