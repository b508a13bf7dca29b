/** Prometheus's text exposition, as tests read it: each sample as `name{labels}` → value (comments left out). */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([^#\s]\S*) (\S+)$/.exec(line);
    if (match) samples.set(match[1]!, Number(match[2]));
  }
  return samples;
}
