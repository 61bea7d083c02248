import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { storeContract } from './contract.js'

storeContract(t, async () => new MemoryStore())
