/**
 * Schema errors in the reader's language. Our schemas carry catalogue keys as their messages
 * (`.min(1, messageKey('request.prompt.empty'))`), filled with the limit's `{max}` or `{min}`;
 * zod's own messages are wrapped in a plain "That request is not valid (…)".
 */
import type { ZodError } from 'zod';
import { en, type MessageKey } from './catalogue.js';
import { localText, type LocalText } from './index.js';

/** A catalogue key as a zod message; checked by the compiler. */
export function messageKey<K extends MessageKey>(key: K): K {
  return key;
}

export function isMessageKey(value: unknown): value is MessageKey {
  return typeof value === 'string' && Object.hasOwn(en, value);
}

/** The first issue of a schema error, as a message for the member. */
export function zodText(error: ZodError): LocalText {
  const issue = error.issues[0];
  if (!issue) return localText('error.invalidRequest');
  if (isMessageKey(issue.message)) {
    const params: Record<string, number> = {};
    if ('maximum' in issue) params.max = Number(issue.maximum);
    if ('minimum' in issue) params.min = Number(issue.minimum);
    return { key: issue.message, params };
  }
  const field = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return localText('error.invalidRequestDetail', { detail: `${field}${issue.message}` });
}
