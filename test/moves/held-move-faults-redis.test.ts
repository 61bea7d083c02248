// Transfers and unloads under store faults on Redis: the sweeps of held-move-faults.ts, in a file of their own.
import { faultSweeps } from './held-move-faults.js'

faultSweeps('redis')
