/** Every slash command of the bot, in the order `/` lists them. */
import type { Command } from '../src/discord/command.js';
import type { DeployedDefinition } from '../src/discord/deploy.js';
import { localizeCommand } from '../src/discord/localize.js';
import charts from './charts.js';
import contest from './contest.js';
import credits from './credits.js';
import creditsAdmin from './credits-admin/index.js';
import download from './download.js';
import help from './help.js';
import jobs from './jobs.js';
import library from './library.js';
import lyrics from './lyrics.js';
import moderation from './moderation.js';
import notify from './notify.js';
import play from './play.js';
import { clear, loop, move, pause, queue, remove, resume, seek, shuffle, skip, stop, volume } from './player.js';
import radio from './radio.js';
import settings from './settings.js';
import song from './song.js';
import upload from './upload.js';
import video from './video.js';
import voice from './voice.js';

export const commands: readonly Command[] = [song, lyrics, voice, video, download, upload, credits, jobs, library, charts, play, queue, skip, pause, resume, stop, volume, seek, loop, shuffle, remove, move, clear, radio, notify, contest, help, creditsAdmin, settings, moderation];

/** What Discord registers: the definitions alone, with their names and descriptions in every language of the catalogue. */
export const commandDefinitions = commands.map((command) => localizeCommand(command.definition));

/** The message commands (the "Apps" menu on a message) that belong with the slash commands, localized in their definitions. */
export const messageCommandDefinitions = commands.flatMap((command) => command.messageCommands ?? []).map((command) => command.definition);

/** Everything `deploy-commands` registers: the slash commands and the message commands. */
export const applicationCommandDefinitions: readonly DeployedDefinition[] = [...commandDefinitions, ...messageCommandDefinitions];
