/** Application commands, global and per guild: list, bulk overwrite, create, get and delete, held to Discord's command limits. */
import { DiscordErrors, FormErrors } from '../errors.js';
import { checkCommand, checkCommandList } from '../limits.js';
import { isRecord, noContent, ok } from './context.js';
import type { RouteContext } from './context.js';

export function registerCommandRoutes(api: RouteContext): void {
  const { commands } = api;

  for (const scoped of [false, true]) {
    const base = scoped ? '/applications/{application_id}/guilds/{guild_id}/commands' : '/applications/{application_id}/commands';
    const scopeOf = (params: Record<string, string>): string | null => {
      api.application(params.application_id ?? '');
      if (!scoped) return null;
      return api.guild(params.guild_id ?? '').id;
    };
    api.route('GET', base, true, ({ params }) => ok(commands.list(scopeOf(params))));
    api.route('PUT', base, true, ({ params, body }) => {
      const scope = scopeOf(params);
      if (!Array.isArray(body)) {
        const errors = new FormErrors();
        errors.add([], 'BASE_TYPE_ARRAY', 'Must be an array.');
        throw DiscordErrors.invalidFormBody(errors);
      }
      checkCommandList(body).throwIfAny();
      return ok(commands.overwrite(scope, body));
    });
    api.route('POST', base, true, ({ params, body }) => {
      const scope = scopeOf(params);
      const command = isRecord(body) ? body : {};
      const errors = new FormErrors();
      checkCommand(errors, [], command, typeof command.type === 'number' ? command.type : 1);
      errors.throwIfAny();
      const { command: saved, created } = commands.upsert(scope, command);
      return { status: created ? 201 : 200, body: saved };
    });
    api.route('GET', `${base}/{command_id}`, true, ({ params }) => {
      const command = commands.get(scopeOf(params), params.command_id ?? '');
      if (!command) throw DiscordErrors.unknownCommand();
      return ok(command);
    });
    api.route('DELETE', `${base}/{command_id}`, true, ({ params }) => {
      if (!commands.delete(scopeOf(params), params.command_id ?? '')) throw DiscordErrors.unknownCommand();
      return noContent;
    });
  }
}
