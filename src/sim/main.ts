// `npm run sim`: the gateway, risk and prepaid simulators on 127.0.0.1, until SIGINT or SIGTERM.
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { REDACT_CENSOR, REDACT_PATHS } from '../redact.js'
import { buildGatewaySim } from './gateway-sim.js'
import { buildPrepaidSim } from './prepaid-sim.js'
import { buildRiskSim } from './risk-sim.js'
import { readyLine } from './ready-line.js'
import { simEnv } from './sim-env.js'
import type { SimEnv } from './sim-env.js'

const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', redact: { paths: [...REDACT_PATHS], censor: REDACT_CENSOR } })

let cfg: SimEnv
try {
  cfg = simEnv(process.env)
} catch (err) {
  logger.fatal((err as Error).message)
  process.exit(1)
}

const sims = [
  { name: 'gateway', port: cfg.ports.gateway, app: buildGatewaySim({ ...cfg.gateway, logger: logger.child({ sim: 'gateway' }) }).app },
  { name: 'risk', port: cfg.ports.risk, app: buildRiskSim({ ...cfg.risk, logger: logger.child({ sim: 'risk' }) }).app },
  { name: 'prepaid', port: cfg.ports.prepaid, app: buildPrepaidSim({ ...cfg.prepaid, logger: logger.child({ sim: 'prepaid' }) }).app }
] as const

closeWithGrace({ delay: 5000, logger }, async ({ err }) => {
  if (err !== undefined) logger.error({ err }, 'simulators stopping on error')
  await Promise.all(sims.map((s) => s.app.close()))
})

for (const s of sims) {
  const line = readyLine(s.name, cfg, await s.app.listen({ host: cfg.host, port: s.port }))
  logger.info(line.fields, line.msg)
}
