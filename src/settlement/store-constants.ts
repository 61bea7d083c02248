// What the settlement shares with the store's key layout and limits.
export { BUCKETS as BUCKETS_FOR_SETTLEMENT } from '../store/keys.js'
export { backlogPerBucket, EVENTS_BACKLOG_MAX_DEFAULT, AUDIT_RETENTION_MS_DEFAULT } from '../store/types.js'
