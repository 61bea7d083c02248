// The console's limits, in one place.
/** a pasted or uploaded backtest report */
export const REPORT_BYTES_MAX = 8 * 1024 * 1024
/** sessions kept at most; the least recently used go first */
export const SESSIONS_MAX = 1000
