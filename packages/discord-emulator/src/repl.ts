import { createInterface } from 'node:readline';
import type { DiscordEmulator } from './emulator.js';
import type { EmulatorMessage, InteractionHandle } from './types.js';

function write(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function describeMessage(message: EmulatorMessage): string {
  const parts = [message.content ? JSON.stringify(message.content) : ''];
  for (const embed of message.embeds) parts.push(`[embed ${JSON.stringify(embed.title ?? embed.description ?? '')}]`);
  for (const attachment of message.attachments) parts.push(`[file ${attachment.filename} ${attachment.size} B]`);
  const buttons = JSON.stringify(message.components ?? []).match(/"custom_id":"[^"]*"/g) ?? [];
  if (buttons.length > 0) parts.push(`[components ${buttons.map((id) => id.slice(13, -1)).join(', ')}]`);
  return `${message.id}${message.ephemeral ? ' (ephemeral)' : ''}: ${parts.filter(Boolean).join(' ')}`;
}

/** Splits `/song create prompt:"rainy city" n:3` into name, subcommands and options. */
export function parseCommandLine(line: string): { name: string; path: string[]; options: Record<string, string> } | null {
  const tokens = [...line.trim().matchAll(/(\S+?):"([^"]*)"|(\S+?):(\S+)|"([^"]*)"|(\S+)/g)];
  const first = tokens.shift();
  const name = first?.[6];
  if (!name?.startsWith('/')) return null;
  const path: string[] = [];
  const options: Record<string, string> = {};
  for (const token of tokens) {
    const key = token[1] ?? token[3];
    const value = token[2] ?? token[4];
    if (key !== undefined && value !== undefined) options[key] = value;
    else path.push(token[5] ?? token[6] ?? '');
  }
  return { name: name.slice(1), path, options };
}

function follow(handle: InteractionHandle): void {
  handle
    .waitForResponse(10_000)
    .then((response) => write(`  bot answered with callback type ${response.type}${response.ephemeral ? ' (ephemeral)' : ''}`))
    .catch(() => write('  the bot did not answer within 10 s (Discord gives 3 s)'));
}

/** Reads commands from the terminal and acts as the seeded user. */
export function startRepl(emu: DiscordEmulator, seed: { guildId: string; channelId: string; userId: string }): void {
  const repl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'discord> ' });
  emu.onMessage((message, change) => write(`  message ${change}: ${describeMessage(message)}`));
  repl.prompt();
  repl.on('line', (line) => {
    const trimmed = line.trim();
    try {
      if (trimmed === 'quit' || trimmed === 'exit') {
        repl.close();
        return;
      }
      if (trimmed === 'messages') {
        for (const message of emu.channelMessages(seed.channelId, { includeEphemeral: true })) write(`  ${describeMessage(message)}`);
      } else if (trimmed === 'findings') {
        for (const finding of emu.findings) write(`  ${finding.kind} ${finding.method} ${finding.path}: ${finding.message} ${finding.details.join('; ')}`);
        if (emu.findings.length === 0) write('  no findings');
      } else if (trimmed.startsWith('click ')) {
        const [, messageId = '', customId = ''] = trimmed.split(/\s+/);
        follow(emu.clickButton({ messageId, customId, userId: seed.userId }));
      } else if (trimmed.startsWith('/')) {
        const parsed = parseCommandLine(trimmed);
        if (parsed) {
          const [first, second] = parsed.path;
          const group = second ? first : undefined;
          const subcommand = second ?? first;
          follow(emu.runCommand({ guildId: seed.guildId, channelId: seed.channelId, userId: seed.userId, name: parsed.name, subcommandGroup: group, subcommand, options: parsed.options }));
        }
      } else if (trimmed !== '') {
        write('  commands: /name [sub] key:value, click <messageId> <customId>, messages, findings, quit');
      }
    } catch (error) {
      write(`  ${(error as Error).message}`);
    }
    repl.prompt();
  });
  repl.on('close', () => process.kill(process.pid, 'SIGINT'));
}
