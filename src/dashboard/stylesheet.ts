/**
 * The dashboard's stylesheet, served at /dashboard/assets/dashboard.css: a dark theme in
 * Discord's colours, one column at phone width, a visible focus ring for the keyboard. Kept in a
 * module so that it ships inside the build and the bundle like the code.
 */
import { VIEWS_CSS } from './views/styles.js';

export const DASHBOARD_CSS = `
:root { color-scheme: dark; --bg: #313338; --panel: #2b2d31; --deep: #1e1f22; --text: #dbdee1; --muted: #b5bac1;
  --accent: #5865f2; --accent-text: #ffffff; --ok: #23a55a; --danger: #f23f43; --border: #3f4147; --focus: #00a8fc; }
* { box-sizing: border-box; }
html { font-size: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 1rem/1.5 "gg sans", "Noto Sans", "Helvetica Neue", Helvetica, Arial, sans-serif; }
a { color: #00a8fc; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--accent); color: var(--accent-text); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; background: var(--deep); padding: .75rem 1rem; }
header.top .brand { font-weight: 700; color: var(--text); text-decoration: none; }
header.top .who { display: flex; gap: .75rem; align-items: center; color: var(--muted); }
nav.pages { background: var(--panel); border-bottom: 1px solid var(--border); overflow-x: auto; }
nav.pages ul { display: flex; gap: .25rem; list-style: none; margin: 0 auto; padding: .25rem 1rem; max-width: 64rem; }
nav.pages a { display: block; padding: .5rem .75rem; border-radius: 4px; color: var(--muted); text-decoration: none; white-space: nowrap; }
nav.pages a[aria-current="page"] { background: var(--bg); color: var(--text); font-weight: 600; }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; margin: 0 0 .75rem; }
section.card, form.card { background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: 1rem; margin: 0 0 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 18rem), 1fr)); }
label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
.hint { color: var(--muted); font-size: .875rem; margin: .25rem 0 .5rem; }
input[type=text], input[type=number], select, textarea { width: 100%; max-width: 32rem; background: var(--deep); color: var(--text);
  border: 1px solid var(--border); border-radius: 4px; padding: .5rem; font: inherit; min-height: 2.5rem; }
select[multiple] { min-height: 8rem; }
fieldset { border: 1px solid var(--border); border-radius: 6px; margin: .5rem 0; padding: .5rem .75rem; max-height: 16rem; overflow-y: auto; }
fieldset label { font-weight: 400; display: flex; gap: .5rem; align-items: center; margin: .25rem 0; }
button, .button { display: inline-block; background: var(--accent); color: var(--accent-text); border: 0; border-radius: 4px; padding: .55rem 1rem;
  font: inherit; font-weight: 600; cursor: pointer; text-decoration: none; min-height: 2.5rem; margin-top: .5rem; }
button.secondary { background: #4e5058; }
button.danger { background: var(--danger); }
header.top button { margin: 0; padding: .35rem .75rem; min-height: 2rem; }
.notice { border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; border-left: 4px solid var(--ok); background: #1f3a2b; }
.notice.error { border-left-color: var(--danger); background: #3d2326; }
ul.servers { list-style: none; padding: 0; margin: 0; display: grid; gap: .5rem; }
ul.servers a { display: block; background: var(--panel); border: 1px solid var(--border); border-radius: 8px; padding: .75rem 1rem; color: var(--text); text-decoration: none; overflow-wrap: anywhere; }
ul.servers a:hover { border-color: var(--accent); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--border); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (max-width: 40rem) { main { padding: .75rem; } h1 { font-size: 1.25rem; } }
${VIEWS_CSS}`;
