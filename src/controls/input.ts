// What the decision hands the store for the card controls: the kinds that apply to this transaction with
// the program's defaults, and the local day their daily totals count in.
import { formatDateTime14 } from '../time.js'
import { OPEN_CONTROLS, type CardControls, type ControlDefault, type ControlKind, type ControlsInput } from '../domain/controls.js'

/** YYYYMMDD of the instant in the zone: the date of the answer's responseDateTime, formatted once a second. */
export function localDay (epochMs: number, timeZone: string): string {
  return formatDateTime14(epochMs, timeZone).slice(0, 8)
}

function defaultOf (kind: ControlKind, defaults: CardControls): ControlDefault {
  const d = defaults[kind]
  return { kind, enabled: d.enabled, perTransactionMax: d.perTransactionMax ?? null, dailyMax: d.dailyMax ?? null }
}

/**
 * The channel's control, and `international` too for a cross-border transaction. A channel that is not a
 * control kind (the request schema allows none today) is checked against `international` only.
 */
export function controlsInputFor (channel: string, crossBorder: boolean, opts: { nowMs: number, timezone: string, defaults?: CardControls }): ControlsInput {
  const defaults = opts.defaults ?? OPEN_CONTROLS
  const out: ControlDefault[] = []
  if (channel !== 'international' && Object.hasOwn(defaults, channel)) out.push(defaultOf(channel as ControlKind, defaults))
  if (crossBorder) out.push(defaultOf('international', defaults))
  return { defaults: out, day: localDay(opts.nowMs, opts.timezone) }
}
