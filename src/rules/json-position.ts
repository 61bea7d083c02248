// Where a JSON text first goes wrong, as a character offset. V8's JSON.parse names the offset for some
// mistakes and not for others (a trailing comma in Node 20), and an editor needs line and column for all.
// Called only after JSON.parse has refused the text, so speed does not matter.

const WS = new Set([' ', '\t', '\n', '\r'])
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// eslint-disable-next-line no-control-regex -- JSON's grammar: control characters may not stand unescaped in a string
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y

class Stop extends Error {
  constructor (readonly at: number) { super('json syntax') }
}

/** The offset of the first syntax error in `text`; text.length when it ends too early; -1 when it is valid. */
export function jsonErrorOffset (text: string): number {
  let i = 0
  const ws = (): void => { while (i < text.length && WS.has(text[i] as string)) i++ }
  const fail = (): never => { throw new Stop(i) }
  const token = (re: RegExp): void => {
    re.lastIndex = i
    const m = re.exec(text)
    if (m === null) fail()
    i += (m as RegExpExecArray)[0].length
  }
  const literal = (word: string): void => { if (text.startsWith(word, i)) i += word.length; else fail() }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++; ws()
      if (text[i] === '}') { i++; return }
      for (;;) {
        ws()
        if (text[i] !== '"') fail()
        token(STRING); ws()
        if (text[i] !== ':') fail()
        i++; value(); ws()
        if (text[i] === ',') { i++; continue }
        if (text[i] === '}') { i++; return }
        fail()
      }
    }
    if (c === '[') {
      i++; ws()
      if (text[i] === ']') { i++; return }
      for (;;) {
        value(); ws()
        if (text[i] === ',') { i++; continue }
        if (text[i] === ']') { i++; return }
        fail()
      }
    }
    if (c === '"') return token(STRING)
    if (c === 't') return literal('true')
    if (c === 'f') return literal('false')
    if (c === 'n') return literal('null')
    token(NUMBER)
  }
  try {
    value(); ws()
    return i === text.length ? -1 : i
  } catch (err) {
    if (err instanceof Stop) return Math.min(err.at, text.length)
    throw err
  }
}
