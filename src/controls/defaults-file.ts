// The program's default card controls (CARD_CONTROLS_FILE), read once at start-up. A bad file stops the
// start with the file and the entry named: running with other defaults than the operator wrote would turn
// on kinds of use the program means to keep off.
import { readFileSync } from 'node:fs'
import { parseControls } from './validate.js'
import { defaultsFrom, OPEN_CONTROLS, type CardControls } from '../domain/controls.js'

export class ControlsFileError extends Error {
  constructor (readonly file: string, readonly entry: string, reason: string) {
    super(`${file}: ${entry === '' ? '' : `${entry}: `}${reason}`)
    this.name = 'ControlsFileError'
  }
}

/** The defaults in the file; with no file, every kind enabled with no limit. Throws a ControlsFileError. */
export function loadControlDefaults (file: string): CardControls {
  if (file === '') return OPEN_CONTROLS
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ControlsFileError(file, '', `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw new ControlsFileError(file, '', `is not JSON (${(err as Error).message})`)
  }
  const parsed = parseControls(doc)
  if (!parsed.ok) throw new ControlsFileError(file, parsed.field, parsed.message)
  return defaultsFrom(parsed.entries)
}
