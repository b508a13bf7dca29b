/**
 * The image's HEALTHCHECK: exits 0 when this process answers `/readyz` with 200. Health is
 * served on METRICS_PORT when set, else on HTTP_PORT (the http role and `ROLE=all`); a gateway
 * or worker without METRICS_PORT has no health to give, and reads as unhealthy.
 */
import { loadConfig } from '../config.js';

const config = loadConfig({ require: [] });
const port = config.metricsPort ?? config.httpPort;
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_500) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
