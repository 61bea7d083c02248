import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { storeContract } from './contract.js'
import { boundaryContract, latestAttemptContract } from './contract-boundaries.js'
import { lifecycleContract } from './lifecycle-contract.js'

storeContract(t, async () => new MemoryStore())
boundaryContract(t, async () => new MemoryStore())
latestAttemptContract(t, async () => new MemoryStore())
lifecycleContract(t, async () => new MemoryStore())
