import t from 'tap'
import { sharedRedisStore } from '../helpers/redis.js'
import { settlementContract } from './contract.js'

settlementContract(t, async (t) => await sharedRedisStore(t))
