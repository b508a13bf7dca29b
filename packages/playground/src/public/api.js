/* global fetch */
/** The playground server's JSON API (same origin). */

/** A refusal from the server, with its readable sentence and HTTP status. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(path, init) {
  let response;
  try {
    response = await fetch(path, { cache: 'no-store', ...init });
  } catch {
    throw new ApiError(0, 'The playground server is not answering. Is `npm run playground` still running?');
  }
  const body = await response.json().catch(() => ({}));
  // Outcomes a person would see (the bot did not answer, Discord's client refused the input)
  // come as 200 with `error`, so the browser logs no failed request for them.
  if (!response.ok || typeof body.error === 'string') {
    throw new ApiError(body.timedOut ? 504 : response.status, body.error ?? `The playground answered ${response.status}.`);
  }
  return body;
}

export function getState() {
  return request('/api/state');
}

/** POSTs to `/api/interactions/<kind>` (command, autocomplete, button, select, modal). */
export function interact(kind, body) {
  return request(`/api/interactions/${kind}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Buys what a premium button sells, as `userId`: `{ userId, messageId, skuId }`; answers `{ entitlement }`. */
export function purchase(body) {
  return request('/api/purchase', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Joins (or leaves) the playground's voice channel as `userId`; answers who is in it. */
export function setVoice(userId, join) {
  return request('/api/voice', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId, join }),
  });
}

/** Gives `userId` the server role (`give`) or takes it, as a moderator would; answers `{ users }` with everyone's roles. */
export function setRole(userId, roleId, give) {
  return request('/api/roles', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId, roleId, give }),
  });
}

/** Holds (or releases) the simulated music service's tasks; answers `{ held }`. */
export function holdService(held) {
  return request('/api/simulator/hold', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ held }),
  });
}
