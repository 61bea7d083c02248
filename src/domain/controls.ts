// Card controls (docs/api/card-controls.md): the cardholder's on/off switch and limits per kind of use. A card's
// own settings are kept field by field over the program's defaults, so a default changed later still
// reaches every field the card has not set itself.
export const CONTROL_KINDS = ['POS', 'ATM', 'ECOM', 'POS-Contactless', 'international'] as const
export type ControlKind = typeof CONTROL_KINDS[number]

export const CONTROL_FIELDS = ['enabled', 'perTransactionMax', 'dailyMax'] as const
export type ControlField = typeof CONTROL_FIELDS[number]

/** One kind's effective control; a limit that is absent does not apply. Amounts in minor units. */
export interface ControlSetting {
  enabled: boolean
  perTransactionMax?: number
  dailyMax?: number
}

export type CardControls = Record<ControlKind, ControlSetting>

/** What a card (or a PATCH, or the defaults file) sets: a field absent is not set; a limit null is "no limit". */
export interface ControlEntry {
  enabled?: boolean
  perTransactionMax?: number | null
  dailyMax?: number | null
}

export type ControlEntries = Partial<Record<ControlKind, ControlEntry>>

/** Without a defaults file every kind is enabled with no limit. */
export const OPEN_CONTROLS: CardControls = Object.freeze({
  POS: { enabled: true },
  ATM: { enabled: true },
  ECOM: { enabled: true },
  'POS-Contactless': { enabled: true },
  international: { enabled: true }
}) as CardControls

/** Which check of a control declined. */
export type ControlCheck = 'enabled' | 'perTransactionMax' | 'dailyMax'

/** The control that declined, with the values it saw (kept in the decision record). */
export interface ControlHit {
  control: ControlKind
  check: ControlCheck
  /** the limit, when a limit declined */
  limit?: number
  /** the kind's approved total of the local day before this transaction, when dailyMax declined */
  totalBefore?: number
  debit: number
}

/** A control as the store applies it: the program's default for each field, the card's own read atomically. */
export interface ControlDefault {
  kind: ControlKind
  enabled: boolean
  perTransactionMax: number | null
  dailyMax: number | null
}

/**
 * What the authorize step needs to apply the controls. The card's own settings are read inside the atomic
 * step (a change between reading and committing could otherwise let an off control pass).
 */
export interface ControlsInput {
  /** the kinds that apply, in the order they are checked: the channel, then `international` when cross-border */
  defaults: ControlDefault[]
  /** the local day of arrival in TIMEZONE (YYYYMMDD): the period of the daily totals */
  day: string
}

/** A card's own settings over the defaults. */
export function effectiveControls (own: ControlEntries, defaults: CardControls): CardControls {
  const out = {} as CardControls
  for (const kind of CONTROL_KINDS) out[kind] = mergeEntry(defaults[kind], own[kind])
  return out
}

function mergeEntry (base: ControlSetting, own: ControlEntry | undefined): ControlSetting {
  const enabled = own?.enabled ?? base.enabled
  const per = own !== undefined && own.perTransactionMax !== undefined ? own.perTransactionMax : base.perTransactionMax ?? null
  const daily = own !== undefined && own.dailyMax !== undefined ? own.dailyMax : base.dailyMax ?? null
  return { enabled, ...(per !== null ? { perTransactionMax: per } : {}), ...(daily !== null ? { dailyMax: daily } : {}) }
}

/** The defaults file's entries over "everything enabled, no limit". */
export function defaultsFrom (entries: ControlEntries): CardControls {
  return effectiveControls(entries, OPEN_CONTROLS)
}
