import { describe, expect, it } from 'vitest';
import type { TaskStatus } from '../../../src/music-api/task-status.js';
import { toStoredResult } from '../../../src/pipeline/transitions.js';

describe('toStoredResult', () => {
  it('keeps no text Postgres jsonb refuses: half an emoji cut by the service, or U+0000', () => {
    const cut = 'rain 😀😀'.slice(0, 8);
    const status = { state: 'SUCCESS', clips: [{ clipId: 'c1', title: `t\u0000${cut}`, lyrics: '\uDE00 la', tags: cut }], lyrics: cut } as unknown as TaskStatus;
    const stored = JSON.stringify(toStoredResult(status));
    expect(stored).not.toMatch(/\\u(d[89a-f][0-9a-f]{2}|0000)/i);
    expect(toStoredResult(status).clips).toMatchObject([{ title: 'train 😀\uFFFD', lyrics: '\uFFFD la' }]);
  });
});
