import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { RouteTable } from './routes.js';
import type { FindingKind } from './types.js';

/** Discord's OpenAPI description, kept in the repository with its licence (see discord-api/README.md). */
export const DEFAULT_OPENAPI_URL = new URL('./discord-api/openapi.json', import.meta.url);

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const COMPONENTS_ID = 'https://discord-emulator.invalid/openapi.json';
const INT_PARSEABLE_STRING = { type: 'string', pattern: '^-?[0-9]+$' } as const;
const MAX_DETAILS = 25;

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: unknown;
}

interface OpenApiOperation {
  operationId?: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  /** Who may call it: `{ BotToken: [] }`, `{ OAuth2: [scopes] }`; absent or empty: anyone. */
  security?: Array<Record<string, string[]>>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown> };
}

/** The request as the emulator parsed it, for checking against the description. */
export type CheckedBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'multipart'; payload: unknown; hasPayloadJson: boolean }
  | { kind: 'form'; fields: Record<string, string> }
  | { kind: 'other'; contentType: string };

/** How the request authenticated: the bot token, an OAuth2 access token (Bearer), or neither. */
export type CheckedAuth = 'bot' | 'bearer' | 'none';

export interface SpecIssue {
  kind: FindingKind;
  message: string;
  details: string[];
}

export interface SpecCheckResult {
  route: string | null;
  operationId: string | null;
  issues: SpecIssue[];
}

const FORM = 'application/x-www-form-urlencoded';
const FORM_STRING = { type: 'string' } as const;
const CLIENT_FIELDS = { client_id: FORM_STRING, client_secret: FORM_STRING } as const;

/** OAuth2's token routes as Discord's OAuth2 page documents them: form-encoded, one shape per grant. */
const OAUTH2_TOKEN_PATHS: Record<string, Record<string, unknown>> = {
  '/oauth2/token': {
    post: {
      operationId: 'oauth2_token',
      requestBody: {
        required: true,
        content: {
          [FORM]: {
            schema: {
              oneOf: [
                grant('authorization_code', { code: FORM_STRING, redirect_uri: FORM_STRING, code_verifier: FORM_STRING }, ['code', 'redirect_uri']),
                grant('refresh_token', { refresh_token: FORM_STRING, scope: FORM_STRING }, ['refresh_token']),
                grant('client_credentials', { scope: FORM_STRING }, ['scope']),
              ],
            },
          },
        },
      },
      responses: { '200': { description: 'an access token' } },
      security: [],
    },
  },
  '/oauth2/token/revoke': {
    post: {
      operationId: 'oauth2_token_revoke',
      requestBody: {
        required: true,
        content: {
          [FORM]: {
            schema: {
              type: 'object',
              properties: { token: FORM_STRING, token_type_hint: { enum: ['access_token', 'refresh_token'] }, ...CLIENT_FIELDS },
              required: ['token'],
              additionalProperties: false,
            },
          },
        },
      },
      responses: { '200': { description: 'revoked' } },
      security: [],
    },
  },
};

function grant(type: string, properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { grant_type: { const: type }, ...properties, ...CLIENT_FIELDS },
    required: ['grant_type', ...required],
    additionalProperties: false,
  };
}

/**
 * What Discord's docs describe and the description lacks, added on load so the bot's requests
 * there are checked like every other: List SKUs (`GET /applications/{application.id}/skus`,
 * no query, no body), entitlement types 1–8 besides the description's 8 and 10, and OAuth2's
 * token and revocation routes (form-encoded bodies).
 */
function addDocumented(doc: OpenApiDocument): OpenApiDocument {
  for (const [path, item] of Object.entries(OAUTH2_TOKEN_PATHS)) doc.paths[path] ??= structuredClone(item);
  const skus = '/applications/{application_id}/skus';
  if (!doc.paths[skus]) {
    doc.paths[skus] = {
      parameters: [{ name: 'application_id', in: 'path', required: true, schema: { $ref: '#/components/schemas/SnowflakeType' } }],
      get: { operationId: 'list_skus', responses: { '200': { description: 'the application\'s SKUs' } } },
    };
  }
  const types = doc.components.schemas.EntitlementTypes as { oneOf?: Array<{ title: string; const: number }> } | undefined;
  if (types?.oneOf) {
    const documented = ['PURCHASE', 'PREMIUM_SUBSCRIPTION', 'DEVELOPER_GIFT', 'TEST_MODE_PURCHASE', 'FREE_PURCHASE', 'USER_GIFT', 'PREMIUM_PURCHASE', 'APPLICATION_SUBSCRIPTION'];
    documented.forEach((title, index) => {
      if (!types.oneOf?.some((entry) => entry.const === index + 1)) types.oneOf?.push({ title, const: index + 1 });
    });
  }
  return doc;
}

interface PathEntry {
  template: string;
  item: Record<string, unknown>;
}

/**
 * Discord's published REST description, used to check what the bot sends. Its known looseness
 * is absorbed so that only real mistakes become findings: integers also as digit strings,
 * snowflakes also as integers, `oneOf` as `anyOf`, query values coerced and empty ones absent
 * (README.md, "OpenAPI checks and findings").
 */
export class OpenApiSpec {
  readonly #doc: OpenApiDocument;
  readonly #paths = new RouteTable<PathEntry>();
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction | null>();

  private constructor(doc: OpenApiDocument) {
    this.#doc = doc;
    for (const [template, item] of Object.entries(doc.paths)) this.#paths.add(template, { template, item });
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, logger: false });
    for (const name of ['date-time', 'uri', 'int32', 'int64', 'double', 'float'] as const) {
      this.#ajv.addFormat(name, fullFormats[name]);
    }
    this.#ajv.addFormat('snowflake', /^(0|[1-9][0-9]*)$/);
    this.#ajv.addFormat('nonce', true);
    this.#ajv.addSchema({ $id: COMPONENTS_ID, components: { schemas: loosenComponents(doc.components.schemas) } });
  }

  static readonly #cache = new Map<string, OpenApiSpec>();

  /** Loads (once per path, for the whole process) and indexes the description. */
  static load(location: string | URL = DEFAULT_OPENAPI_URL): OpenApiSpec {
    const key = location.toString();
    let spec = OpenApiSpec.#cache.get(key);
    if (!spec) {
      const doc = JSON.parse(readFileSync(location, 'utf8')) as OpenApiDocument;
      if (!doc.paths || !doc.components?.schemas) throw new Error(`${key} is not an OpenAPI description with paths and schemas`);
      spec = new OpenApiSpec(addDocumented(doc));
      OpenApiSpec.#cache.set(key, spec);
    }
    return spec;
  }

  get pathCount(): number {
    return Object.keys(this.#doc.paths).length;
  }

  /**
   * Checks path, method, query, body, and a Bearer token against the operation's `security`;
   * returns the matched template and every issue.
   */
  check(method: string, path: string, query: URLSearchParams, body: CheckedBody, auth: CheckedAuth = 'none'): SpecCheckResult {
    const match = this.#paths.match(path);
    if (!match) {
      return {
        route: null,
        operationId: null,
        issues: [{ kind: 'unknown-route', message: `Discord's API description has no path ${path}`, details: [] }],
      };
    }
    const lower = method.toLowerCase();
    const operation = match.value.item[lower] as OpenApiOperation | undefined;
    if (!operation || !(HTTP_METHODS as readonly string[]).includes(lower)) {
      return {
        route: match.template,
        operationId: null,
        issues: [{ kind: 'unknown-method', message: `${method} is not defined for ${match.template}`, details: [] }],
      };
    }
    const operationId = operation.operationId ?? `${lower} ${match.template}`;
    const issues = [
      ...this.#checkQuery(operationId, match.template, match.value.item, operation, query),
      ...this.#checkBody(operationId, operation, body),
      ...checkBearer(operationId, operation, auth),
    ];
    return { route: match.template, operationId, issues };
  }

  /** The OAuth2 scopes the operation names in its `security` (any one of them will do); null when it takes no Bearer token. */
  oauth2Scopes(method: string, path: string): string[] | null {
    const match = this.#paths.match(path);
    const operation = match?.value.item[method.toLowerCase()] as OpenApiOperation | undefined;
    const entry = operation?.security?.find((requirement) => 'OAuth2' in requirement);
    return entry?.OAuth2 ?? null;
  }

  #checkQuery(
    operationId: string,
    template: string,
    item: Record<string, unknown>,
    operation: OpenApiOperation,
    query: URLSearchParams,
  ): SpecIssue[] {
    const declared = new Map<string, OpenApiParameter>();
    for (const parameter of [...asParameters(item.parameters), ...(operation.parameters ?? [])]) {
      if (parameter.in === 'query') declared.set(parameter.name, parameter);
    }
    const issues: SpecIssue[] = [];
    const seen = new Set<string>();
    for (const [name, raw] of query) {
      seen.add(name);
      const parameter = declared.get(name);
      if (!parameter) {
        issues.push({ kind: 'invalid-query', message: `${operationId} takes no query parameter "${name}"`, details: [] });
        continue;
      }
      if (raw === '' || !parameter.schema) continue; // an empty value stands for null/absent
      const validate = this.#validator(`query ${template} ${operationId} ${name}`, parameter.schema);
      if (!validate) continue;
      const candidates: unknown[] = [raw];
      if (/^(true|false)$/i.test(raw)) candidates.push(raw.toLowerCase() === 'true');
      if (raw.trim() !== '' && Number.isFinite(Number(raw))) candidates.push(Number(raw));
      if (!candidates.some((candidate) => validate(candidate))) {
        issues.push({
          kind: 'invalid-query',
          message: `query parameter "${name}" of ${operationId} does not match the description`,
          details: formatErrors(validate.errors, `?${name}`),
        });
      }
    }
    for (const [name, parameter] of declared) {
      if (parameter.required && !seen.has(name)) {
        issues.push({ kind: 'invalid-query', message: `${operationId} requires query parameter "${name}"`, details: [] });
      }
    }
    return issues;
  }

  #checkBody(operationId: string, operation: OpenApiOperation, body: CheckedBody): SpecIssue[] {
    const content = operation.requestBody?.content;
    if (body.kind === 'none') {
      return operation.requestBody?.required
        ? [{ kind: 'missing-body', message: `${operationId} requires a request body`, details: [] }]
        : [];
    }
    if (!content) {
      return [{ kind: 'unexpected-body', message: `${operationId} takes no request body`, details: [] }];
    }
    if (body.kind === 'other') {
      return [{ kind: 'unsupported-content-type', message: `${operationId} does not take ${body.contentType}`, details: [] }];
    }
    if (body.kind === 'form') {
      const formSchema = content[FORM]?.schema;
      if (!formSchema) return [{ kind: 'unsupported-content-type', message: `${operationId} does not take ${FORM}`, details: [] }];
      const validateForm = this.#validator(`form ${operationId}`, formSchema);
      if (!validateForm || validateForm(body.fields)) return [];
      return [{ kind: 'invalid-body', message: `form body does not match ${operationId}`, details: formatErrors(validateForm.errors, '') }];
    }
    if (body.kind === 'multipart' && !content['multipart/form-data']) {
      return [{ kind: 'unsupported-content-type', message: `${operationId} does not take multipart/form-data`, details: [] }];
    }
    if (body.kind === 'multipart' && !body.hasPayloadJson) return [];
    const schema = content['application/json']?.schema;
    if (!schema) {
      return body.kind === 'json'
        ? [{ kind: 'unsupported-content-type', message: `${operationId} does not take application/json`, details: [] }]
        : [];
    }
    const validate = this.#validator(`body ${operationId}`, schema);
    if (!validate) return [];
    const value = body.kind === 'json' ? body.value : body.payload;
    if (validate(value)) return [];
    return [
      {
        kind: 'invalid-body',
        message: `request body does not match ${operationId} in Discord's API description`,
        details: formatErrors(validate.errors, ''),
      },
    ];
  }

  /** Compiles once per key; a schema Ajv cannot compile yields `null` (and is not checked). */
  #validator(key: string, schema: unknown): ValidateFunction | null {
    if (this.#validators.has(key)) return this.#validators.get(key) ?? null;
    let validate: ValidateFunction | null;
    try {
      validate = this.#ajv.compile(loosen(schema, COMPONENTS_ID) as object);
    } catch {
      validate = null;
    }
    this.#validators.set(key, validate);
    return validate;
  }
}

/** A Bearer token where the operation's `security` names no OAuth2 scheme (bot-only routes). */
function checkBearer(operationId: string, operation: OpenApiOperation, auth: CheckedAuth): SpecIssue[] {
  if (auth !== 'bearer' || !operation.security || operation.security.length === 0) return [];
  if (operation.security.some((requirement) => 'OAuth2' in requirement)) return [];
  return [{ kind: 'invalid-auth', message: `${operationId} takes no OAuth2 Bearer token`, details: [] }];
}

function asParameters(value: unknown): OpenApiParameter[] {
  return Array.isArray(value) ? (value as OpenApiParameter[]) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeIncludes(type: unknown, name: string): boolean {
  return type === name || (Array.isArray(type) && type.includes(name));
}

function loosenComponents(schemas: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    out[name] =
      name === 'SnowflakeType'
        ? { anyOf: [loosen(schema, ''), { type: 'integer', minimum: 0 }] }
        : loosen(schema, '');
  }
  return out;
}

/**
 * Rewrites one schema for the looseness described on {@link OpenApiSpec}; local `$ref`s
 * get `refBase` so schemas outside the components document still resolve.
 */
function loosen(node: unknown, refBase: string): unknown {
  if (Array.isArray(node)) return node.map((item) => loosen(item, refBase));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) {
      out.$ref = `${refBase}${value}`;
    } else if (key === 'oneOf') {
      const branches = loosen(value, refBase);
      if ('anyOf' in node) out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: branches }];
      else out.anyOf = branches;
    } else if (key === 'anyOf' && 'oneOf' in node) {
      out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: loosen(value, refBase) }];
    } else if (key === 'allOf' && Array.isArray(out.allOf)) {
      out.allOf = [...out.allOf, ...(loosen(value, refBase) as unknown[])];
    } else {
      out[key] = loosen(value, refBase);
    }
  }
  if (typeIncludes(out.type, 'integer') && !typeIncludes(out.type, 'string')) {
    return { anyOf: [out, INT_PARSEABLE_STRING] };
  }
  return out;
}

function formatErrors(errors: ErrorObject[] | null | undefined, prefix: string): string[] {
  const lines = new Set<string>();
  for (const error of errors ?? []) {
    // The branch-level "must match a schema in anyOf" adds nothing to the leaf messages.
    if (error.keyword === 'anyOf' && (errors?.length ?? 0) > 1) continue;
    const where = `${prefix}${error.instancePath}` || '/';
    const extra =
      error.keyword === 'enum' || error.keyword === 'const'
        ? ` ${JSON.stringify(error.params)}`
        : error.keyword === 'additionalProperties'
          ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})`
          : '';
    lines.add(`${where}: ${error.message ?? error.keyword}${extra}`);
    if (lines.size >= MAX_DETAILS) break;
  }
  return [...lines];
}
