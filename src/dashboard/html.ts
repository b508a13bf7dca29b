/**
 * Server-rendered HTML for the dashboard. `html` escapes every interpolated value unless it is
 * already `Html` (another `html` result or `raw`), so text from Discord (server, member and
 * channel names) can never become markup. Pages carry no inline script: the CSP forbids it.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);
}

type Part = Html | string | number | bigint | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** A tagged template: `html\`<td>${name}</td>\`` escapes `name`; arrays of parts are joined. */
export function html(strings: TemplateStringsArray, ...parts: readonly Part[]): Html {
  let text = strings[0] ?? '';
  for (let i = 0; i < parts.length; i += 1) text += render(parts[i] as Part) + (strings[i + 1] ?? '');
  return new Html(text);
}

/** Markup the caller vouches for (a constant, or output of a trusted renderer). */
export function raw(text: string): Html {
  return new Html(text);
}
