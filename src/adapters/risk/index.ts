// The risk service's public surface: one analysis of a transaction.
export { createRiskAdapter, RISK_DEFAULT_TIMEOUT_MS, RISK_PATH } from './adapter.js'
export type { RiskAdapter, RiskAnalyseInput, RiskAssessment, RiskOptions, RiskResult } from './adapter.js'
