// npm run demo (scripts/lib/demo-run.ts): the card flow against simulated parties, then the day closed against
// the platform's statement. Exit 1 when the books do not agree at the end, or a step fails.
import { runDemo } from './lib/demo-run.js'

try {
  const { day } = await runDemo()
  if (!day.agree) {
    process.stderr.write('demo: the books do not agree with the platform\'s at the close of the day\n')
    process.exitCode = 1
  }
} catch (err) {
  process.stderr.write(`demo failed: ${(err as Error).stack ?? String(err)}\n`)
  process.exitCode = 1
}
