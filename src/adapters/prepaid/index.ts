// The prepaid platform's public surface: wallet-to-wallet transfers and unloads (token, send, decrypt).
export { checkUnload, createPrepaidAdapter, DEFAULT_TRANSFER_MESSAGE_CODE, PREPAID_PATHS } from './adapter.js'
export type {
  DecryptResult, PrepaidAdapter, PrepaidDeclined, PrepaidOptions, TokenResult, TransferDone, TransferInput, TransferResult,
  UnloadDone, UnloadInput, UnloadResult, WalletDeclineFamily, WalletLeg, WalletRef
} from './adapter.js'
