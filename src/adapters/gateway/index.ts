// The gateway's public surface: OTP loads, the authorization that completes them, pre-auth capture and cancel.
export {
  createGatewayAdapter, DEFAULT_PRE_AUTH_CANCELLATION_ACTION, GATEWAY_PATHS, PRE_AUTH_COMPLETION_ACTION, PRE_AUTH_TRANSACTION_TYPE_CODE
} from './adapter.js'
export type {
  AuthorizeInput, AuthorizeResult, GatewayAdapter, GatewayDeclined, GatewayDeclineFamily, GatewayOptions, GenerateOtpInput,
  OtpAccepted, OtpResult, PreAuthInput, PreAuthResult, ResendOtpInput, TxnApproval, VerifyOtpInput
} from './adapter.js'
