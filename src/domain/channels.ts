// The channels the External Authorization endpoint accepts (spec "External Authorization request"). The
// body schema and the rule checks both read this list, so a rule can never name a channel no request carries.
export const CHANNELS = ['POS', 'ECOM', 'ATM', 'POS-Contactless'] as const

export type Channel = typeof CHANNELS[number]
