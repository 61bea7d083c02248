// The parsers on answers the simulators do not produce: numbers as strings and strings as numbers,
// "0" / "00" / 0, and shapes that must not pass for success.
import t from 'tap'
import { gatewayCodeMeaning } from '../../src/adapters/gateway/codes.js'
import { parseCaptureAnswer, parseOtpAnswer, parseTxnAnswer } from '../../src/adapters/gateway/parse.js'
import { parseTokenAnswer, parseTransferAnswer } from '../../src/adapters/prepaid/parse.js'
import { walletCodeFamily } from '../../src/adapters/prepaid/wallet-codes.js'

t.test('gateway transaction answers', async (t) => {
  for (const [status, pgErrorCode, transactionId] of [[50020, '0', '12'], ['50020', 0, 12], [' 50020 ', '00', '12']] as const) {
    t.match(parseTxnAnswer({ status, pgErrorCode, transactionId, approvalCode: 123456, rrn: '000000000000001' }),
      { kind: 'ok', status: '50020', transactionId: '12', approvalCode: '123456', rrn: '000000000000001' })
  }
  t.match(parseTxnAnswer({ status: 50020, pgErrorCode: 0 }), { kind: 'unparsable', detail: '/transactionId required on success' })
  t.match(parseTxnAnswer({ status: '50020', pgErrorCode: '51', pgErrorDetail: '' }),
    { kind: 'declined', code: '51', description: 'NON SUFFICIENT FUNDS', family: 'issuer_declined' }, 'empty detail filled from the table')
  t.match(parseTxnAnswer({ status: '50099', pgErrorCode: '0', transactionId: 1 }), { kind: 'declined', code: '50099', family: 'unknown' },
    'a failed status is not a success even with error code 0')
  t.match(parseTxnAnswer({ status: 'ok', pgErrorCode: 0 }), { kind: 'unparsable' })
  t.match(parseTxnAnswer({ status: 50020, pgErrorCode: 1.5 }), { kind: 'unparsable' })
  t.match(parseTxnAnswer([]), { kind: 'unparsable' })
})

t.test('gateway OTP answers', async (t) => {
  for (const errorcode of [0, '0', '00']) {
    t.match(parseOtpAnswer({ status: 'success', errorcode, validityPeriod: '05', pgTransactionId: 77 }),
      { kind: 'ok', validityPeriodMin: 5, pgTransactionId: '77' })
  }
  t.match(parseOtpAnswer({ status: 'SUCCESS', errorcode: 0, validityPeriod: 10 }), { kind: 'ok', validityPeriodMin: 10 })
  t.match(parseOtpAnswer({ status: 'failed', errorcode: 451, errormsg: 'Expired OTP' }), { kind: 'declined', code: '451', family: 'otp_expired' })
  t.match(parseOtpAnswer({ status: 'success', errorcode: '450' }), { kind: 'declined', code: '450' }, 'an error code wins over the status word')
  t.match(parseOtpAnswer({ status: 'failed', errorcode: '0' }), { kind: 'declined', code: 'failed' })
  t.match(parseOtpAnswer({ status: 'pending', errorcode: '0' }), { kind: 'unparsable' })
  t.match(parseOtpAnswer({ status: 'success' }), { kind: 'unparsable', detail: '/ required' })
})

t.test('pre-auth capture answers in both shapes', async (t) => {
  t.match(parseCaptureAnswer({ transactionId: '9', status: '50020', pgErrorCode: '0', pgErrorDetail: 'ok' }), { kind: 'ok', transactionId: '9' })
  t.match(parseCaptureAnswer({ status: 'success', errorcode: '00', errormsg: '', pgTransactionId: '9', schemeTransactionId: 'S1' }),
    { kind: 'ok', transactionId: '9', schemeTransactionId: 'S1' })
  t.match(parseCaptureAnswer({ status: 'failed', errorcode: '13', errormsg: 'Amount Error' }), { kind: 'declined', code: '13' })
})

t.test('code 96 tells a duplicate from a system error by its description', async (t) => {
  t.same(gatewayCodeMeaning('96', 'PREVIOUSLY AUTHORIZED'), { family: 'duplicate', retryable: false, previously: 'authorized' })
  t.same(gatewayCodeMeaning('96', 'Previously Declined'), { family: 'duplicate', retryable: false, previously: 'declined' })
  t.same(gatewayCodeMeaning('96', 'SYSTEM ERROR'), { family: 'system', retryable: true })
  t.same(gatewayCodeMeaning('01', ''), { family: 'invalid_request', retryable: false })
  t.same(gatewayCodeMeaning('1', ''), { family: 'invalid_request', retryable: false })
})

t.test('prepaid answers', async (t) => {
  t.same(parseTokenAnswer({ token: 'abc' }), { kind: 'ok', token: 'abc' })
  t.match(parseTokenAnswer({ responseCode: 1262, responseMessage: null }),
    { kind: 'declined', code: '1262', description: 'CLIENT ID NOT PRESENT IN THE REQUEST', family: 'credentials' })
  t.match(parseTokenAnswer({ responseCode: '00' }), { kind: 'unparsable' }, 'success without a token is not a token')
  t.match(parseTransferAnswer({ responseCode: 0, clientTxnId: 'C', ledgerTransactionId: 1000000001, transactionAmount: '525', availableBalance: 100 }, 'C'),
    { kind: 'ok', ledgerTransactionId: '1000000001', transactionAmount: 525, availableBalance: 100, senders: [], receivers: [] })
  t.match(parseTransferAnswer({ responseCode: '00', clientTxnId: 'OTHER', ledgerTransactionId: 1, transactionAmount: 1 }, 'C'),
    { kind: 'unparsable', detail: '/clientTxnId not ours' })
  t.match(parseTransferAnswer({ responseCode: '00', clientTxnId: 'C', ledgerTransactionId: 1, transactionAmount: '5.25' }, 'C'),
    { kind: 'unparsable' }, 'amounts are integers in minor units')
  t.match(parseTransferAnswer({ responseCode: '6919', clientTxnId: 'C' }, 'C'), { kind: 'declined', family: 'insufficient_funds' })
  t.equal(walletCodeFamily('7948'), 'not_allowed')
  t.equal(walletCodeFamily('6913'), 'invalid_request')
  t.equal(walletCodeFamily('1052'), 'system')
  t.equal(walletCodeFamily('4242'), 'unknown')
})
