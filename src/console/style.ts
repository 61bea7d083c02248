// The console's one style sheet, served from the admin listener itself (the admin network has no internet:
// no fonts or CDNs). Plain and readable; the focus ring is kept visible for keyboard use.
export const STYLE = `
:root { color-scheme: light; --ink: #1b1f23; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; --accent: #0a58ca; --bad: #a40e26; --good: #116329; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: var(--ink); background: #fff; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible { outline: 3px solid #ffbf47; outline-offset: 1px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .4rem .8rem; }
.skip:focus { left: .5rem; z-index: 10; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .3rem 1.2rem; padding: .6rem 1.2rem; background: #24292f; color: #fff; }
header.top .brand { font-weight: 700; color: #fff; text-decoration: none; margin-right: .6rem; }
header.top nav ul { display: flex; flex-wrap: wrap; gap: .2rem 1rem; list-style: none; margin: 0; padding: 0; }
header.top nav a { color: #fff; }
header.top nav a[aria-current="page"] { font-weight: 700; text-decoration: underline 3px; }
header.top .who { margin-left: auto; display: flex; align-items: center; gap: .6rem; font-size: .9rem; }
header.top .who button { background: transparent; color: #fff; border: 1px solid #8c959f; }
main { padding: 1rem 1.2rem 3rem; max-width: 1200px; }
h1 { font-size: 1.5rem; margin: .3rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.6rem 0 .6rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
table { border-collapse: collapse; width: 100%; margin: .3rem 0 1rem; font-size: .92rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td code { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8rem; }
td.num, td.nowrap { white-space: nowrap; }
caption { text-align: left; padding: .2rem 0; }
th { background: var(--bg); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: .3rem 0 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.code { display: inline-block; min-width: 2.2em; text-align: center; font-weight: 700; padding: 0 .3em; border-radius: 4px; background: #ffebe9; color: var(--bad); }
.code.ok { background: #dafbe1; color: var(--good); }
.muted { color: var(--muted); }
.desc { font-weight: 400; }
.flash { padding: .6rem .8rem; border-radius: 6px; margin: 0 0 1rem; border: 1px solid; }
.flash.ok { background: #dafbe1; border-color: #4ac26b; }
.flash.error { background: #ffebe9; border-color: #ff8182; }
form.inline { display: inline; }
form.controls { margin: .4rem 0 1rem; padding: .7rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
form.controls table { background: #fff; margin: 0 0 .6rem; }
form.controls td input:not([type=checkbox]) { width: 10rem; }
form.controls .row { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: flex-end; }
form.search, form.action { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: flex-end; margin: .4rem 0 1rem; padding: .7rem; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
form label { display: flex; flex-direction: column; font-size: .85rem; gap: .15rem; }
form label.check { flex-direction: row; align-items: center; gap: .35rem; }
input, select, textarea, button { font: inherit; }
input, select, textarea { padding: .3rem .4rem; border: 1px solid #8c959f; border-radius: 4px; background: #fff; }
input.reason { min-width: 18rem; }
textarea { width: 100%; min-height: 12rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85rem; }
button { padding: .35rem .9rem; border-radius: 4px; border: 1px solid #1f6feb; background: #0969da; color: #fff; cursor: pointer; }
button.danger { background: #cf222e; border-color: #a40e26; }
form.stack { flex-direction: column; align-items: stretch; }
form.stack button { align-self: flex-start; }
.actions { display: grid; grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); gap: .2rem 1rem; }
.actions h3 { margin-top: .4rem; }
pre { background: var(--bg); border: 1px solid var(--line); padding: .6rem; overflow-x: auto; font-size: .85rem; }
.pager { display: flex; gap: 1rem; }
.signin { max-width: 28rem; margin: 4rem auto; }
.signin form { flex-direction: column; align-items: stretch; }
.tag { font-size: .78rem; padding: .05rem .4rem; border-radius: 999px; border: 1px solid var(--line); background: var(--bg); }
`
