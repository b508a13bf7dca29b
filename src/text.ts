/** Text helpers every layer shares: cutting text to a limit, showing a member's text as typed, and Discord's timestamp markup. */
import { escapeMarkdown as escapeDiscordMarkdown, time } from '@discordjs/formatters';

/** `text` cut to at most `max` characters, ending with an ellipsis when it was cut. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * A member's text (or the service's echo of it) as Discord shows it when the bot posts it in a
 * message or an embed: every markdown sign shows as typed (bold, italics, spoilers, code,
 * masked links, headings, subtext, lists, quotes), and mentions read as text. Escape before
 * cutting to a limit: escaping lengthens the text. Select menus, buttons, modals, footers and
 * autocomplete choices are plain text: they take the text as it is.
 */
export function escapeMarkdown(text: string): string {
  return (
    escapeDiscordMarkdown(text, { heading: true, bulletedList: true, numberedList: true })
      // Every `[`, not only the first of a line as discord.js's `maskedLink` does: `[a](x) [b](y)` holds two links.
      .replaceAll('[', '\\[')
      .replace(/^(\s*)(>|-#)/gm, '$1\\$2')
      // User, role and channel mentions and command links: `\<@1>` shows as typed; `\@everyone` too.
      .replace(/<(?=[@#/])/g, '\\<')
      .replace(/@(?=everyone|here)/g, '\\@')
  );
}

/**
 * A member's text inside the bot's own inline code (`` `/song voice:…` ``): code shows markdown
 * as typed already, but a backtick would end the code early.
 */
export function inCode(text: string): string {
  return text.replaceAll('`', 'ˋ');
}

/**
 * Discord's `<t:…>` markup, which every reader sees in their own time zone (`R`: "in 2 minutes").
 * This file is the one place outside the Discord layers allowed `@discordjs/formatters` (pure
 * string functions), so the pipeline writes timestamps through here.
 */
export function discordTimestamp(date: Date, style: 't' | 'T' | 'd' | 'D' | 'f' | 'F' | 'R' = 'f'): string {
  return time(date, style);
}
