/**
 * `tsx packages/test-world/src/check-tools.ts <test|playground>`: exits 1 with one line on
 * stderr naming what is missing and the command that installs it; silent when all is there.
 */
import { checkTools } from './tools.js';

const purpose = process.argv[2];
if (purpose !== 'test' && purpose !== 'playground') {
  process.stderr.write('usage: check-tools.ts <test|playground>\n');
  process.exit(2);
}
const { line } = checkTools(purpose);
if (line !== undefined) {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}
