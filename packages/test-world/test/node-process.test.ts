/** A node script in a child process: its lines, a wait for one of them, and a stop with a signal. */
import { afterEach, describe, expect, it } from 'vitest';
import { NodeProcess } from '../src/index.js';

const started: NodeProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((script) => script.stop('SIGKILL')));
});

/** `node -e <code>`. */
function run(code: string, name?: string): NodeProcess {
  const script = new NodeProcess(['-e', code], { ...(name && { name }) });
  started.push(script);
  return script;
}

describe('NodeProcess', () => {
  it('resolves with what the matcher took from the first line it accepts, and keeps every line written', async () => {
    const lines: string[] = [];
    const script = new NodeProcess(['-e', `console.log('warming up'); console.error('a warning'); setTimeout(() => console.log('ready at http://127.0.0.1:4321/'), 100); setInterval(() => {}, 1000);`], {
      onLine: (line) => lines.push(line),
    });
    started.push(script);

    const url = await script.waitForLine((line) => /ready at (\S+)/.exec(line)?.[1], 'it was ready');

    expect(url).toBe('http://127.0.0.1:4321/');
    expect(lines).toEqual(expect.arrayContaining(['warming up', 'a warning', 'ready at http://127.0.0.1:4321/']));
    expect(script.output()).toContain('a warning');
    expect(script.running).toBe(true);
    expect(script.pid).toBeTypeOf('number');
  });

  it('rejects, naming the process and what it wrote, when it ends before the line', async () => {
    const script = run(`console.log('cannot start: no database'); process.exit(3)`, 'the sketch');

    await expect(script.waitForLine((line) => line.includes('ready'), 'it was ready')).rejects.toThrow(/the sketch exited \(3\) before it was ready: cannot start: no database/);
    expect(script.exit).toEqual({ code: 3, signal: null });
    expect(script.pid).toBeUndefined();
  });

  it('stops with the signal asked for, and the script handles it', async () => {
    const script = run(`process.on('SIGINT', () => { console.log('bye'); process.exit(0); }); console.log('up'); setInterval(() => {}, 1000);`);
    await script.waitForLine((line) => line === 'up', 'it was up');

    expect(await script.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(script.output()).toContain('bye');
  });

  it('kills a process that ignores the signal once the timeout is over', async () => {
    const script = run(`process.on('SIGTERM', () => console.log('ignored')); console.log('up'); setInterval(() => {}, 1000);`);
    await script.waitForLine((line) => line === 'up', 'it was up');

    expect(await script.stop('SIGTERM', 300)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(script.output()).toContain('ignored');
  });
});
