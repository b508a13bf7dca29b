/** The Discord emulator's public API, for tests, the playground and the CLI. */
export { DiscordEmulator, startDiscordEmulator } from './emulator.js';
export type { CreateForumPostInput, CreateThreadInput, EmulatorChannel, EmulatorGuild, EmulatorMember, EntitlementDeliveryRecord } from './emulator.js';
export type { CreateSkuInput, EmulatorSubscription, EntitlementDelivery, EntitlementEventType, EntitlementOrder, EntitlementRecord, SkuKind } from './store/monetization.js';
export { WEBHOOK_EVENT_TIMEOUT_MS } from './webhook-events.js';
export { ACCESS_TOKEN_LIFETIME_SECONDS, AUTHORIZATION_CODE_LIFETIME_MS } from './oauth2/authorizations.js';
export type { OAuth2Authorization } from './oauth2/authorizations.js';
export type { WebhookEventRetry } from './webhook-events.js';
export { EmulatorClock } from './clock.js';
export { DiscordLimits } from './limits.js';
export { DEFAULT_OPENAPI_URL, OpenApiSpec } from './openapi.js';
export { INITIAL_RESPONSE_WINDOW_MS } from './interactions/callback.js';
export { DEFAULT_ATTACHMENT_SIZE_LIMIT } from './interactions/payload.js';
export { INTERACTION_TOKEN_LIFETIME_MS } from './interactions/webhooks.js';
export { RESUMABLE_CLOSE_CODE } from './gateway.js';
export type { GatewayStats } from './gateway.js';
export type { RateLimitOptions, RouteMatcher } from './rest-api.js';
export { DISCORD_RATE_LIMITS, bucketHash } from './rate-limits.js';
export type { BucketLimit, RateLimitHit, RateLimitScope, RateLimitSettings } from './rate-limits.js';
export type {
  AttachmentInput,
  AutocompleteChoice,
  AutocompleteInput,
  CdnRequest,
  ClickButtonInput,
  RunMessageCommandInput,
  CommandOptionValue,
  DiscordEmulatorOptions,
  EmulatorAttachment,
  EmulatorMessage,
  Finding,
  FindingKind,
  InteractionHandle,
  InteractionPlace,
  InteractionResponse,
  PlainOptionValue,
  RecordedFile,
  RecordedRequest,
  RunCommandInput,
  SelectOptionInput,
  SubmitModalInput,
  UncheckedInteractionInput,
} from './types.js';
export { compareEnvelope, pcmEnvelope, GAP_THRESHOLD_MS } from './voice/reception.js';
export type { EnvelopeComparison, VoiceAudioListener, VoiceReception } from './voice/reception.js';
export { VOICE_CA_PATH } from './voice/server.js';
export type { VoiceRefusal, VoiceRefusalReason } from './voice/states.js';
export type { CreateChannelInput } from './store/guilds.js';
export type { DaveState } from './voice/dave.js';
