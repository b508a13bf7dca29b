/** OAuth2's token routes: `POST /oauth2/token` (three grants) and `POST /oauth2/token/revoke`, form-encoded only. */
import { OAuth2Error } from '../oauth2/authorizations.js';
import type { HandlerContext, HandlerResult, RouteContext } from './context.js';

/** RFC 6749, 5.1: token answers are not to be cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

export function registerOAuth2Routes(api: RouteContext): void {
  api.route('POST', '/oauth2/token', false, (request) => oauth2Answer(request, () => api.oauth2.token(request.form ?? {}, request.authorization)));
  api.route('POST', '/oauth2/token/revoke', false, (request) =>
    oauth2Answer(request, () => {
      api.oauth2.revoke(request.form ?? {}, request.authorization);
      return {};
    }),
  );
}

/**
 * Runs one token route. A body that is not form-encoded has no fields to Discord (its OAuth2
 * page: "JSON content is not permitted and will return an error"), so it fails as an empty form.
 */
function oauth2Answer(request: HandlerContext, run: () => unknown): HandlerResult {
  try {
    return { status: 200, body: run(), headers: { ...NO_STORE } };
  } catch (error) {
    if (!(error instanceof OAuth2Error)) throw error;
    const basic = /^Basic\s/i.test(request.authorization ?? '');
    const challenge: Record<string, string> = error.status === 401 && basic ? { 'www-authenticate': 'Basic realm="discord"' } : {};
    return { status: error.status, body: error.toBody(), headers: { ...NO_STORE, ...challenge } };
  }
}
