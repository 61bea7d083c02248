// The operation and fault kinds the CI runs of the money simulation leave out, each because of a money hole
// the simulation finds in the code as it stands. Each entry names its kind and what fails with it on; remove
// an entry once its fix is in, and the CI runs cover that kind again. `npm run sim:money` runs with
// everything on.
export const KNOWN_HOLES: Readonly<Record<string, string>> = Object.freeze({
  'time-jump': 'a transfer or unload record that names a hold not yet confirmed (or held, its save lost) expires 30 days after its last change with the money still taken; a repeat after that finds no record and takes the amount again under the same, expired, hold reference, and the first hold is never given back'
})

export const CI_OFF: readonly string[] = Object.keys(KNOWN_HOLES)
