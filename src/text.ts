/** Text helpers every layer shares: cutting text to a limit, and Discord's timestamp markup. */

/** `text` cut to at most `max` characters, ending with an ellipsis when it was cut. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Discord's `<t:…>` markup, which every reader sees in their own time zone (`R`: "in 2 minutes"). */
export function discordTimestamp(date: Date, style: 't' | 'T' | 'd' | 'D' | 'f' | 'F' | 'R' = 'f'): string {
  return `<t:${Math.floor(date.getTime() / 1000)}:${style}>`;
}
