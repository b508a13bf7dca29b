import { describe, expect, it } from 'vitest';
import { welcomeText } from '../../../src/discord/welcome.js';
import { english } from '../../../src/i18n/index.js';

describe('welcomeText', () => {
  it('shows the bot’s name as it is written, markdown and all', () => {
    const text = welcomeText({ botName: '__Beat_Bot__ *2*', startingCredits: 0 }, english);
    expect(text).toContain('**Thanks for adding \\_\\_Beat\\_Bot\\_\\_ \\*2\\*!**');
  });
});
