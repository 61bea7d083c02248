// k6 provides console (https://grafana.com/docs/k6/latest/javascript-api/#console); @types/k6 does not declare it.
declare const console: {
  log: (...args: unknown[]) => void
  info: (...args: unknown[]) => void
  warn: (...args: unknown[]) => void
  error: (...args: unknown[]) => void
  debug: (...args: unknown[]) => void
}
