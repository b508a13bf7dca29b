/** The handle a test holds on an interaction it started: the bot's response, the original message, follow-ups, and waits for them. */
import type { EmulatorMessage, InteractionHandle } from '../types.js';
import { waitUntil } from '../wait.js';
import type { InteractionContext, InteractionRecord } from './record.js';

const DEFAULT_WAIT_MS = 5_000;

export function interactionHandle(context: InteractionContext, record: InteractionRecord): InteractionHandle {
  const store = context.store;
  const view = (id: string | undefined): EmulatorMessage | undefined => {
    const stored = id ? store.messages.get(id) : undefined;
    return stored ? store.publicMessage(stored) : undefined;
  };
  const originalId = (): string | undefined => record.originalMessageId ?? record.sourceMessageId;
  return {
    id: record.id,
    token: record.token,
    payload: record.payload,
    get response() {
      return record.response;
    },
    get followUps() {
      return record.followUpIds.flatMap((id) => {
        const message = view(id);
        return message ? [message] : [];
      });
    },
    original: () => view(originalId()),
    modal: () => record.modal,
    waitForResponse: (timeoutMs = DEFAULT_WAIT_MS) =>
      waitUntil(context.events, 'change', () => record.response, timeoutMs, `the response to interaction ${record.id}`),
    waitForEdit: (predicate = () => true, timeoutMs = DEFAULT_WAIT_MS) =>
      waitUntil(
        context.events,
        'change',
        () => {
          const id = originalId();
          const stored = id ? store.messages.get(id) : undefined;
          if (!stored || context.version(stored) <= record.baselineVersion) return undefined;
          const message = store.publicMessage(stored);
          return predicate(message) ? message : undefined;
        },
        timeoutMs,
        `an edit of the original message of interaction ${record.id}`,
      ),
    waitForFollowUp: (predicate = () => true, timeoutMs = DEFAULT_WAIT_MS) =>
      waitUntil(
        context.events,
        'change',
        () => record.followUpIds.map((id) => view(id)).find((message) => message !== undefined && predicate(message)),
        timeoutMs,
        `a follow-up to interaction ${record.id}`,
      ),
  };

}
