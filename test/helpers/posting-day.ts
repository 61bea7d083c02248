// The day statements in tests are posted: yesterday (UTC), and the day after it. A statement is imported within
// days of its postings (POSTING_HORIZON_MS): a fixed date would be refused once it is 44 days old.
export const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
export const NEXT = new Date(Date.parse(DAY) + 86_400_000).toISOString().slice(0, 10)
