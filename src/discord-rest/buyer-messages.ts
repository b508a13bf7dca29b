/** Direct messages to a member who bought something, and the name of the server it went to. */
import { API } from '@discordjs/core/http-only';
import { REST } from '@discordjs/rest';
import { isCannotSendToUser, REST_SWEEPS, type OutgoingMessage } from './discord-delivery.js';
import { restTrafficOptions, type RestTraffic } from './rest-requests.js';

export interface BuyerMessages {
  /** The server's name as Discord gives it; undefined when Discord does not say. */
  guildName(guildId: string): Promise<string | undefined>;
  /**
   * Opens (or finds) the DM channel and posts once: `nonce` makes Discord keep a retried post
   * to one message. `refused` when Discord says the user takes no message from the bot.
   */
  sendDirectMessage(userId: string, message: OutgoingMessage, nonce: string): Promise<'sent' | 'refused'>;
}

export function createBuyerMessages(options: { apiUrl: string; token: string; timeoutMs?: number; traffic?: RestTraffic }): BuyerMessages {
  const timeout = options.timeoutMs ?? 15_000;
  const api = new API(new REST({ api: options.apiUrl, timeout, retries: 2, ...REST_SWEEPS, ...restTrafficOptions(options.traffic ?? {}, timeout) }).setToken(options.token));
  return {
    async guildName(guildId) {
      const guild = await api.guilds.get(guildId).catch(() => undefined);
      return guild?.name;
    },
    async sendDirectMessage(userId, message, nonce) {
      try {
        const channel = await api.users.createDM(userId);
        await api.channels.createMessage(channel.id, { ...message, nonce, enforce_nonce: true });
        return 'sent';
      } catch (error) {
        if (isCannotSendToUser(error)) return 'refused';
        throw error;
      }
    },
  };
}
