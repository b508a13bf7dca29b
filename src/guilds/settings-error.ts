import { english, type LocalText } from '../i18n/index.js';

/** A moderator's change the guild's settings refuse, with why, for the moderator to read. */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
  /** Written for the moderator who asked, in their language; `message` is the English, for logs. */
  constructor(readonly userText: LocalText) {
    super(english.text(userText));
  }
}
