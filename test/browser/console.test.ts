// The operator console in a real browser, as a person uses it: sign in with the keyboard, find a decision
// made through the live endpoint and read why, reverse it with a reason and see the balance and the audit
// entry, change a card control and see the next decision follow it, resolve a reconciliation exception and see
// it leave the open queue, force stand-in on with a reason and see the instance's state; a read key sees no action and its forged
// POST is refused; hostile text shows as text and runs nothing; a cross-site POST is refused; the session
// ends after the inactivity period; axe-core finds no serious or critical violation on any page.
// UPDATE_SCREENSHOTS=1 writes the screenshots of docs/operations/console.md.
import t from 'tap'
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import type { Browser, Page } from 'playwright-core'
import { consoleFixture, KEYS, LAST4, STANDIN_OPERATOR, standInConsoleFixture, URN, XSS, type Fixture } from '../console/fixture.js'
import { REPO_ROOT } from '../helpers/server-process.js'
import { launch, missingBrowser } from './browser.js'
import { settlementFor } from '../../src/settlement/for-store.js'

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs/operations/console') : null
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** a backtest report as `extauth rules backtest --json` prints it */
const REPORT = {
  from: '2026-11-01T00:00:00.000Z', to: '2026-11-08T00:00:00.000Z', decisions: 48210,
  baseline: { reproduced: 48209, unreproduced: [{ reference: 'TRN-88120', urn: 'URN0420', recorded: '00', replayed: '65', reason: 'the journal does not reach back to the start of its 24h window' }] },
  changes: { approvedToDeclined: { count: 4, amount: 120000 }, declinedToApproved: { count: 11, amount: 5500 } },
  rules: [
    { id: 'atm-hourly-count', in: 'candidate', hits: 9, approvedToDeclined: { count: 4, amount: 120000, samples: ['TRN-1201', 'TRN-1733'] }, declinedToApproved: { count: 0, amount: 0, samples: [] } },
    { id: 'block-gambling', in: 'both', hits: 31, approvedToDeclined: { count: 0, amount: 0, samples: [] }, declinedToApproved: { count: 0, amount: 0, samples: [] } },
    { id: 'ecom-night', in: 'baseline', hits: 11, approvedToDeclined: { count: 0, amount: 0, samples: [] }, declinedToApproved: { count: 11, amount: 5500, samples: ['TRN-3301'] } }
  ],
  changed: [
    { reference: 'TRN-1201', urn: 'URN0007', from: '00', to: '65', baselineRule: null, candidateRule: 'atm-hourly-count' },
    { reference: 'TRN-3301', urn: 'URN0042', from: '05', to: '00', baselineRule: 'ecom-night', candidateRule: null }
  ],
  warnings: []
}

async function shot (page: Page, name: string): Promise<void> {
  if (SHOTS === null) return
  mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

/** axe-core's serious and critical findings on the page as it is */
async function axeFindings (page: Page): Promise<string[]> {
  // evaluated through the DevTools protocol: the page's own CSP (no inline script) stays on
  await page.evaluate(axeSource)
  return await page.evaluate(async () => {
    const w = window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string, impact: string | null, nodes: Array<{ target: unknown }> }> }> } }
    const r = await w.axe.run(document, { resultTypes: ['violations'] })
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${String(v.impact)}): ${JSON.stringify(v.nodes.map((n) => n.target))}`)
  })
}

async function listen (f: Fixture): Promise<{ admin: string, pub: string }> {
  await f.adminApp.listen({ host: '127.0.0.1', port: 0 })
  await f.publicApp.listen({ host: '127.0.0.1', port: 0 })
  return {
    admin: `http://127.0.0.1:${(f.adminApp.server.address() as AddressInfo).port}`,
    pub: `http://127.0.0.1:${(f.publicApp.server.address() as AddressInfo).port}`
  }
}

/** sign in as a person does: the key typed into the focused field, Enter */
async function signIn (page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/admin/console`)
  await page.waitForURL(/\/sign-in/)
  // the key field takes the focus by itself (autofocus): typing goes there
  await page.locator('#key:focus').waitFor({ timeout: 10_000 })
  await page.keyboard.type(key)
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/admin\/console\/decisions/, { timeout: 10_000 }).catch(async (err: unknown) => {
    throw new Error(`not signed in; the page says: ${(await page.textContent('main')) ?? ''}`, { cause: err })
  })
}

async function main (): Promise<void> {
  const browser: Browser = await launch()
  t.teardown(async () => { await browser.close() })

  t.test('a support agent finds a decision, reads why, reverses it and sees the audit', async (t) => {
    const f = await consoleFixture(t)
    const { admin } = await listen(f)
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    const dialogs: string[] = []
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss() })
    const cspErrors: string[] = []
    page.on('console', (m) => { if (m.type() === 'error') cspErrors.push(m.text()) })

    await page.goto(`${admin}/admin/console`)
    await page.waitForURL(/\/sign-in/)
    await page.locator('#key:focus').waitFor({ timeout: 10_000 })
    t.pass('the key field has the focus')
    await shot(page, 'sign-in')
    t.same(await axeFindings(page), [], 'sign-in: no serious or critical accessibility finding')
    await page.keyboard.type(KEYS.agent.key)
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/admin\/console\/decisions/)
    t.match(await page.textContent('header'), `Signed in with key ${KEYS.agent.id}`)

    // find the declined decision by its reference, open it, read why
    await page.getByLabel('Reference').fill(f.refs.rule)
    await page.getByLabel('Reference').press('Enter')
    await page.waitForURL(/reference=/)
    await page.getByRole('link', { name: f.refs.rule }).click()
    await page.waitForURL(/\/decisions\/URNCONSOLE1\//)
    const why = await page.textContent('main') ?? ''
    t.match(why, '05 declined (do not honour)')
    t.match(why, 'Deciding ruleblock-gambling')
    t.same(await axeFindings(page), [], 'decision page: nothing serious')

    // the list of decisions, for the screenshot
    await page.goto(`${admin}/admin/console/decisions?urn=${URN}`)
    await shot(page, 'decisions')
    t.same(await axeFindings(page), [], 'search: nothing serious')

    // the hostile decision: its merchant name is text, and nothing ran
    await page.goto(`${admin}/admin/console/decisions/${URN}/${f.refs.hostile}`)
    t.equal(await page.getByRole('row', { name: /merchantName/ }).getByRole('cell').textContent(), XSS, 'the merchant name shows as typed')
    t.equal(await page.locator('main script, main img').count(), 0, 'no element made from it')
    await shot(page, 'decision')

    // reverse it with a reason: the balance and the audit say so
    const before = (await f.deps.store.getCustomer(URN))?.available ?? 0
    await page.getByLabel('Reason (kept in the audit trail)').fill('duplicate charge, cardholder called')
    await page.getByRole('button', { name: 'Reverse' }).click()
    await page.waitForSelector('.flash.ok')
    t.match(await page.textContent('.flash.ok'), `Released 700; available balance now ${(before + 700).toLocaleString('en-US')}`)
    t.match(await page.textContent('main'), 'Reversal: 700 released')
    await page.getByRole('link', { name: 'Audit trail' }).click()
    await page.waitForURL(/\/audit/)
    const row = page.getByRole('row', { name: /duplicate charge, cardholder called/ })
    t.match(await row.textContent(), `${KEYS.agent.id}POST /admin/console/decisions/:urn/:ref/reverse`)
    await shot(page, 'audit')
    t.same(await axeFindings(page), [], 'audit: nothing serious')
    t.same(dialogs, [], 'no script ran')
    t.same(cspErrors.filter((e) => /Content Security Policy/i.test(e)), [], 'nothing the CSP had to block')
  })

  t.test('a card control changed on the customer page decides the next authorization', async (t) => {
    const f = await consoleFixture(t)
    const { admin, pub } = await listen(f)
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    await signIn(page, admin, KEYS.agent.key)
    await page.getByRole('link', { name: 'Customers' }).click()
    await page.getByLabel('Customer (urn)').fill(URN)
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/customers\/URNCONSOLE1$/)
    t.same(await axeFindings(page), [], 'customer page: nothing serious')

    const card = page.getByRole('form', { name: `Change the controls of card ${LAST4}` })
    await card.getByLabel('POS per transaction max').fill('1000')
    await card.getByLabel('Reason (kept in the audit trail)').fill('cardholder asked for a lower limit')
    await card.getByRole('button', { name: 'Save controls' }).click()
    await page.waitForSelector('.flash.ok')
    t.match(await page.textContent('.flash.ok'), 'POS changed')

    // the live endpoint, over HTTP: the next decision follows the new limit
    const body = { urn: URN, last4Digits: LAST4, terminalId: 'T1', systemTraceAuditNumber: '1', cardNetwork: 'RUPAY', channel: 'POS', transactionAmount: '1500', transactionReferenceNumber: 'BROWSER-LIMIT-1', currencyCode: '356', mcc: '5411', merchantName: 'Corner Shop' }
    const { platformHeaders } = await import('../helpers/config.js')
    const res = await fetch(`${pub}/api/v1/externalAuth`, { method: 'POST', headers: platformHeaders(), body: JSON.stringify(body) })
    t.equal(((await res.json()) as { responseCode: string }).responseCode, '61')
    await page.goto(`${admin}/admin/console/decisions/${URN}/BROWSER-LIMIT-1`)
    const why = await page.textContent('main') ?? ''
    t.match(why, 'Deciding card controlPOS: perTransactionMax')
    t.match(why, 'Control limit1,000')

    // credit with the keyboard alone: Tab to the fields, type, Enter
    await page.goto(`${admin}/admin/console/customers/${URN}`)
    await page.getByRole('form', { name: 'Credit' }).getByLabel('Amount (minor units)').focus()
    await page.keyboard.type('2500')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    await page.keyboard.type('goodwill credit')
    await page.keyboard.press('Enter')
    await page.waitForSelector('.flash.ok')
    t.match(await page.textContent('.flash.ok'), 'Credited 2,500')
    await shot(page, 'customer')
    await page.goto(`${admin}/admin/console/rules`)
    t.same(await axeFindings(page), [], 'rules: nothing serious')
    await shot(page, 'rules')
    // a backtest report, uploaded as a file
    await page.goto(`${admin}/admin/console/backtest`)
    await page.getByLabel('Upload the report file').setInputFiles({ name: 'report.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(REPORT)) })
    await page.getByRole('button', { name: 'Show' }).click()
    await page.getByRole('heading', { name: 'Per rule' }).waitFor()
    t.match(await page.textContent('main'), 'Approved → declined4 (amount 1,200.00 INR)')
    t.same(await axeFindings(page), [], 'backtest report: nothing serious')
    await shot(page, 'backtest')
  })

  t.test('an operator resolves a reconciliation exception and sees it leave the open queue', async (t) => {
    const f = await consoleFixture(t, { env: { SETTLEMENT_MODE: 'holds' } })
    const settlement = settlementFor(f.deps.store)
    const ids: string[] = []
    for (const n of [1, 2]) {
      const r = await settlement.applyPosting({ platformId: `PF-B${n}`, type: 'purchase', reference: `NO-AUTH-${n}`, urn: URN, last4: '', amount: 400 * n, currency: '356', postedAt: '2026-11-20T10:00:00Z' }, 'S-2026-11-20', null)
      ids.push(r.exceptions[0] ?? '')
    }
    const [first, second] = ids as [string, string]
    const { admin } = await listen(f)
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    await signIn(page, admin, KEYS.agent.key)
    await page.getByRole('link', { name: 'Queues' }).click()
    await page.waitForURL(/\/queues$/)
    t.same(await axeFindings(page), [], 'queues with resolve forms: nothing serious')
    await shot(page, 'queues')
    const before = (await f.deps.store.getCustomer(URN))?.available ?? 0

    // the platform took 400 it never asked for: credit it back, with a reason
    const form = page.getByRole('form', { name: `Resolve ${first}` })
    await form.getByLabel('Action').selectOption('credit')
    await form.getByLabel(/^Amount/).fill('400')
    await form.getByLabel('Reason (kept in the audit trail)').fill('posted without authorization, refunded')
    await form.getByRole('button', { name: 'Resolve' }).click()
    await page.waitForSelector('.flash.ok')
    t.match(await page.textContent('.flash.ok'), `Exception ${first} resolved: credit 400.`)
    const queue = page.locator('#reconciliation')
    t.equal(await queue.getByText(first, { exact: true }).count(), 0, 'it left the open queue')
    t.equal(await queue.getByText(second, { exact: true }).count(), 1, 'the other is still there')
    t.equal((await f.deps.store.getCustomer(URN))?.available, before + 400, 'credited once')
    await page.getByRole('link', { name: 'Audit trail' }).click()
    await page.waitForURL(/\/audit/)
    const row = page.getByRole('row', { name: /posted without authorization, refunded/ })
    t.match(await row.textContent(), `${KEYS.agent.id}POST /admin/console/queues/reconciliation/:id/resolve`)
  })

  t.test('an on-call operator forces stand-in on from the queues page, with a reason, and sees it', async (t) => {
    const operator = STANDIN_OPERATOR
    const f = await standInConsoleFixture(t)
    const { admin } = await listen(f)
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    await signIn(page, admin, operator.key)
    await page.getByRole('link', { name: 'Queues' }).click()
    await page.waitForURL(/\/queues$/)
    const section = page.locator('#standin')
    t.match(await section.textContent(), 'Standby: deciding with the store.')
    const form = page.getByRole('form', { name: 'Force stand-in on this instance' })
    await form.getByLabel('Force on this instance').selectOption('on')
    await form.getByLabel('Reason (kept in the audit trail)').fill('Redis primary under maintenance CHG-1234')
    await form.getByRole('button', { name: 'Apply' }).click()
    await page.waitForSelector('.flash.ok')
    t.match(await page.textContent('.flash.ok'), 'Stand-in forced on on this instance')
    t.match(await section.textContent(), 'Active: the store cannot be reached (or stand-in is forced on)')
    t.match(await section.textContent(), `on by ${operator.id}`)
    t.equal(f.deps.standIn?.forcedOn, true, 'the instance decides in stand-in')
    t.same(await axeFindings(page), [], 'queues with the stand-in form: nothing serious')
  })

  t.test('a read key sees no action, and a forged POST from its session is refused', async (t) => {
    const f = await consoleFixture(t)
    const { admin } = await listen(f)
    const ctx = await browser.newContext()
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    await signIn(page, admin, KEYS.reader.key)
    await page.goto(`${admin}/admin/console/customers/${URN}`)
    t.equal(await page.getByRole('button', { name: /Credit|Debit|Set status|Save controls/ }).count(), 0, 'no action button')
    await page.goto(`${admin}/admin/console/decisions/${URN}/${f.refs.approved}`)
    t.equal(await page.getByRole('button', { name: 'Reverse' }).count(), 0)
    const before = await f.deps.store.getCustomer(URN)
    // the form the page did not show, sent from the page with its own session and token
    const status = await page.evaluate(async (url) => {
      const token = (document.querySelector('input[name=_csrf]') as HTMLInputElement).value
      const r = await fetch(url, { method: 'POST', body: new URLSearchParams({ _csrf: token, amount: '5000', reference: 'forged', reason: 'forged by hand' }) })
      return r.status
    }, `${admin}/admin/console/customers/${URN}/credit`)
    t.equal(status, 403)
    t.same(await f.deps.store.getCustomer(URN), before, 'nothing credited')
  })

  t.test('a form posted from another site is refused', async (t) => {
    const f = await consoleFixture(t)
    const { admin } = await listen(f)
    const evil = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html')
      res.end(`<form id=f method=post action="${admin}/admin/console/customers/${URN}/credit"><input name=amount value=9000><input name=reference value=evil-1><input name=reason value=evil></form><script>document.getElementById('f').submit()</script>`)
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { evil.close() })
    const ctx = await browser.newContext()
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    await signIn(page, admin, KEYS.agent.key)
    const before = await f.deps.store.getCustomer(URN)
    const landed = page.waitForURL(/\/admin\/console\/customers\/.*\/credit/)
    await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`)
    await landed
    // same site (127.0.0.1), so the browser sends the cookie: the missing form token is what refuses it
    t.match(await page.textContent('main'), 'did not come from this console session')
    t.same(await f.deps.store.getCustomer(URN), before, 'nothing credited')
  })

  t.test('the session ends after the inactivity period', async (t) => {
    let offset = 0
    const f = await consoleFixture(t, { env: { CONSOLE_IDLE_TIMEOUT_MS: '60000' }, clock: () => Date.now() + offset })
    const { admin } = await listen(f)
    const ctx = await browser.newContext()
    t.teardown(async () => { await ctx.close() })
    const page = await ctx.newPage()
    await signIn(page, admin, KEYS.reader.key)
    offset += 61_000
    await page.getByRole('link', { name: 'Rules' }).click()
    await page.waitForURL(/\/sign-in\?/)
    t.match(await page.textContent('main'), 'Your session has ended')
  })
}

const missing = missingBrowser()
if (missing !== null) {
  // counted as skipped in the summary, with the reason on its line
  t.test('the console in a browser', { skip: `skipped: ${missing}` }, async () => {})
} else {
  await main()
}
