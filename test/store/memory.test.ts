import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { storeContract } from './contract.js'
import { boundaryContract } from './contract-boundaries.js'

storeContract(t, async () => new MemoryStore())
boundaryContract(t, async () => new MemoryStore())
