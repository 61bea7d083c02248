// Risk inside the decision: the risk service is asked only when a rule names a `risk.` field, within
// RISK_TIMEOUT_MS and what is left of the decision's deadline. When it cannot answer, `risk.available` is
// false and the rules decide.
import type { RiskAdapter } from '../adapters/index.js'
import type { RiskLookup } from './pipeline.js'
import { debitAmountOf } from '../domain/amounts.js'

export function riskLookupFrom (risk: RiskAdapter, timeoutMs: number): RiskLookup {
  return async (req, { budgetMs, signal }) => {
    try {
      const res = await risk.analyse({
        clientTxnRefId: req.transactionReferenceNumber.replace(/[^A-Za-z0-9]/g, '').slice(0, 64) || 'ref',
        acctNumber: req.urn.replace(/[^A-Za-z0-9]/g, '') || 'urn',
        purchaseAmount: debitAmountOf(req),
        txnSourceType: req.channel.replace(/[^A-Za-z0-9]/g, '')
      }, { budgetMs: Math.min(budgetMs, timeoutMs), signal })
      if (res.kind !== 'ok') return null
      return { available: true, ruleRating: res.ruleRating, ruleSuggestion: res.ruleSuggestion, stepUp: res.stepUp }
    } catch {
      // a request the adapter refuses to send (malformed) is a risk service we cannot ask
      return null
    }
  }
}
