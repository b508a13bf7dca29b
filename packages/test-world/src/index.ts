/** The test world's public API: the tests, the chaos suite, the benchmarks and the playground build their world with it. */
export { BotProcess, buildFolder, ROOT, runBotScript } from './bot-process.js';
export type { BotEntry, BotProcessOptions, Crash, LogLine, ProcessExit } from './bot-process.js';
export { populateGuilds, seedCast } from './cast.js';
export type { CastGuild, Members, Place } from './cast.js';
export { NodeProcess } from './node-process.js';
export type { NodeProcessOptions } from './node-process.js';
export { BOT_TOKEN, MODERATION_KEY, SIM_KEY } from './secrets.js';
export { sleep, waitFor } from './wait.js';
export { tcpProxy } from './tcp-proxy.js';
export type { TcpProxy } from './tcp-proxy.js';
export { startStandIns } from './stand-ins.js';
export type { StandIns } from './stand-ins.js';
export { startWorld } from './world.js';
export type { EmbeddedServer, World, WorldOptions } from './world.js';
export { bundledFfmpegDir, checkTools, findChromium, onPath, pathWithBundledFfmpeg, postgresBinDirs } from './tools.js';
export type { ToolsCheck, ToolsPurpose } from './tools.js';
