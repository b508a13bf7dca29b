import { describe, expect, it } from 'vitest';
import { checkFfmpeg, FFMPEG_MISSING } from '../../../src/voice/ffmpeg.js';

describe('the ffmpeg check at start-up', () => {
  it('finds the machine’s ffmpeg and whether it has libopus', async () => {
    const found = await checkFfmpeg('ffmpeg');
    expect(found).toMatchObject({ found: true, libopus: true });
    expect(found.version).toMatch(/^ffmpeg version /);
  });

  it('says plainly when the binary is missing, and how to get it', async () => {
    expect(await checkFfmpeg('/nonexistent/ffmpeg')).toEqual({ found: false, libopus: false });
    expect(FFMPEG_MISSING).toContain('apt-get install -y ffmpeg');
    expect(FFMPEG_MISSING).toContain('FFMPEG_PATH');
  });
});
