// extauth's mark for the pages the admin listener serves (the API reference's title bar and tab): an SVG
// written here, so the pages load nothing from another host.

/** the title bar's mark: a card and the name (the reference draws it 40 px high) */
export const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40" role="img" aria-label="extauth">
<rect x="1" y="5" width="44" height="30" rx="4" fill="#f4f7fb" stroke="#f4f7fb" stroke-width="2"/>
<rect x="1" y="12" width="44" height="6" fill="#1b2b41"/>
<rect x="7" y="24" width="12" height="5" rx="1" fill="#1b2b41"/>
<path d="M27 27l4 4 8-9" fill="none" stroke="#2e9e6a" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>
<text x="56" y="28" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="22" font-weight="600" fill="#f4f7fb">extauth</text>
</svg>
`

/** the tab's icon: the card alone */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">
<rect x="1" y="5" width="30" height="22" rx="3" fill="#1b2b41"/>
<rect x="1" y="10" width="30" height="4" fill="#f4f7fb"/>
<path d="M17 20l3 3 6-7" fill="none" stroke="#2e9e6a" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
`

export const REFERENCE_TITLE = 'extauth API reference'
