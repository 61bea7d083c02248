import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { settlementContract } from './contract.js'

settlementContract(t, async () => new MemoryStore())
