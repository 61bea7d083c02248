// One headless Chromium for a test file: Debian's /usr/bin/chromium (CHROMIUM_PATH elsewhere) driven by
// playwright-core, which downloads no browser of its own. Where it is not installed outside CI the file is
// skipped with a line saying how to install it; in CI (CI=true) a missing browser fails.
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** why the browser tests cannot run here, or null */
export function missingBrowser (): string | null {
  if (existsSync(CHROMIUM)) return null
  const why = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
  if (process.env.CI === 'true') throw new Error(`${why}: CI must run the browser tests`)
  return why
}

export async function launch (): Promise<Browser> {
  return await chromium.launch({ executablePath: CHROMIUM, args: FLAGS })
}
