/**
 * The overview's, history's and library's part of the dashboard's stylesheet (the frame serves
 * them together): figure cards, chart boxes, filter rows and the song list, one column at phone
 * width. A warning is marked with a sign as well as a colour.
 */
export const VIEWS_CSS = `
.dv-cards { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 14rem), 1fr)); margin: 0 0 1rem; }
.dv-card { background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: .75rem 1rem; }
.dv-card h2 { font-size: .8rem; color: var(--muted); font-weight: 700; margin: 0; text-transform: uppercase; letter-spacing: .03em; }
.dv-figure { font-size: 1.75rem; font-weight: 700; margin: .25rem 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
.dv-card .hint { margin: 0; }
.dv-card.dv-warn { border-color: #f0b232; border-left-width: 4px; }
.dv-card.dv-warn .dv-figure::before { content: "\\26A0\\FE0E  "; color: #f0b232; }
.dv-chart-box { position: relative; height: 20rem; }
.dv-range { margin: 0 0 .5rem; color: var(--muted); }
.dv-range strong { color: var(--text); }
.dv-numbers { margin-top: .75rem; }
.dv-numbers summary { cursor: pointer; color: #00a8fc; }
.dv-scroll { overflow: auto; max-height: 28rem; }
.dv-num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td, th { overflow-wrap: anywhere; }
.dv-filter-row { display: grid; gap: 0 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 12rem), 1fr)); }
input[type=date] { width: 100%; background: var(--deep); color: var(--text); border: 1px solid var(--border); border-radius: 4px; padding: .5rem; font: inherit; min-height: 2.5rem; }
.dv-paging { display: flex; gap: 1rem; justify-content: space-between; margin-top: .75rem; }
.dv-songs { list-style: none; padding: 0; margin: 0; display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 18rem), 1fr)); }
.dv-song { margin: 0; }
.dv-song-title { overflow-wrap: anywhere; }
.dv-song audio { width: 100%; margin: .25rem 0; }
@media (max-width: 40rem) { .dv-chart-box { height: 16rem; } .dv-figure { font-size: 1.4rem; } }
`;
