// The adapters' public surface, for the service's wiring (config, card-lifecycle routes, decision pipeline).
export { adapterOptionsFromEnv } from './config.js'
export type { AdapterOptionsFromEnv } from './config.js'
export { AdapterBadRequestError, AdapterConfigError, AdapterOptionError, isAdapterBadRequest } from './errors.js'
export type { AdapterBadRequest } from './errors.js'
export {
  createGatewayAdapter, DEFAULT_PRE_AUTH_CANCELLATION_ACTION, GATEWAY_PATHS, PRE_AUTH_COMPLETION_ACTION, PRE_AUTH_TRANSACTION_TYPE_CODE
} from './gateway.js'
export type {
  AuthorizeInput, AuthorizeResult, GatewayAdapter, GatewayDeclined, GatewayDeclineFamily, GatewayOptions, GenerateOtpInput,
  OtpAccepted, OtpResult, PreAuthInput, PreAuthResult, ResendOtpInput, TxnApproval, VerifyOtpInput
} from './gateway.js'
export type { CallOptions } from './http.js'
export type { AdapterDeps, HttpOptions } from './options.js'
export { createPrepaidAdapter, DEFAULT_TRANSFER_MESSAGE_CODE, PREPAID_PATHS } from './prepaid.js'
export type {
  DecryptResult, PrepaidAdapter, PrepaidDeclined, PrepaidOptions, TokenResult, TransferDone, TransferInput, TransferResult,
  WalletDeclineFamily, WalletLeg, WalletRef
} from './prepaid.js'
export { REDACT_CENSOR, REDACT_PATHS } from './redact.js'
export type { Answer, DeclinedBase, Failed, FailureReason, Ok } from './result.js'
export { createRiskAdapter, RISK_DEFAULT_TIMEOUT_MS, RISK_PATH } from './risk.js'
export type { RiskAdapter, RiskAnalyseInput, RiskAssessment, RiskOptions, RiskResult } from './risk.js'
