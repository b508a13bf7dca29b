/**
 * The message catalogue: one typed table per language, English the source; the compiler checks
 * every key and placeholder where a message is used. Our own rather than i18next and the like:
 * docs/decisions/message-catalogue.md
 */
import { en } from './en/index.js';
import type { Message, Plural } from './messages.js';

export type MessageKey = keyof typeof en;
/** Every language's catalogue has every key; translations only relax the literal types. */
export type Catalogue = { readonly [K in MessageKey]: Message };

/**
 * `{name}` is a parameter, `{name:unit}` a counted one; `{/jobs show}` and `{:song voice}` are
 * command references, written by the translator.
 */
type PlaceholdersIn<S> = S extends `${string}{${infer Name}}${infer Rest}`
  ? (Name extends `/${string}` | `:${string}` ? never : Name extends `${infer Param}:${string}` ? Param : Name) | PlaceholdersIn<Rest>
  : never;
type PlaceholdersOfMessage<M> = M extends string ? PlaceholdersIn<M> : M extends Plural ? PlaceholdersIn<M[keyof M] & string> | 'count' : never;

/** The parameters a message takes, from the English text: `{balance}` needs `balance`. */
export type ParamsOf<K extends MessageKey> = { readonly [P in PlaceholdersOfMessage<(typeof en)[K]>]: string | number };
/** A message's parameters, if it has any: `t('x')` or `t('y', { balance: 3 })`. */
export type ParamsArg<K extends MessageKey> = PlaceholdersOfMessage<(typeof en)[K]> extends never ? [] : [params: ParamsOf<K>];

export { en };
