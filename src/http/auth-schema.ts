// The External Authorization route's schemas: the body (defined with the shared vocabulary, in
// domain/auth-request-schema.ts) and the answer.
import { CHANNELS } from '../domain/channels.js'
import { authRequestSchema } from '../domain/auth-request-schema.js'

export { CHANNELS, authRequestSchema }

export const EXTERNAL_AUTH_PATH = '/api/v1/externalAuth'

export const answerSchema = {
  type: 'object',
  required: ['responseCode', 'responseDescription', 'responseDateTime', 'transactionAmount', 'currencyCode'],
  properties: {
    responseCode: { type: 'string' },
    responseDescription: { type: 'string' },
    responseDateTime: { type: 'string' },
    transactionAmount: { type: 'string' },
    currencyCode: { type: 'string' }
  }
} as const
