/** Matches request paths against `/channels/{channel_id}/messages`-style templates. */
export class PathTemplate {
  readonly template: string;
  readonly segments: ReadonlyArray<{ literal: string } | { param: string }>;

  constructor(template: string) {
    this.template = template;
    this.segments = splitPath(template).map((segment) => {
      const param = /^\{([^}]+)\}$/.exec(segment);
      return param?.[1] ? { param: param[1] } : { literal: segment };
    });
  }

  /** The path parameters when `path` fits, otherwise `null`. */
  match(pathSegments: readonly string[]): Record<string, string> | null {
    if (pathSegments.length !== this.segments.length) return null;
    const params: Record<string, string> = {};
    for (const [index, segment] of this.segments.entries()) {
      const actual = pathSegments[index];
      if (actual === undefined) return null;
      const decoded = safeDecode(actual); // clients send `/users/%40me` for `/users/@me`
      if ('literal' in segment) {
        if (segment.literal !== decoded) return null;
      } else {
        if (decoded === '') return null;
        params[segment.param] = decoded;
      }
    }
    return params;
  }

  /** Literal segments outrank parameters, left to right (`/users/@me` beats `/users/{user_id}`). */
  moreSpecificThan(other: PathTemplate): boolean {
    for (const [index, segment] of this.segments.entries()) {
      const theirs = other.segments[index];
      const mineLiteral = 'literal' in segment;
      const theirsLiteral = theirs !== undefined && 'literal' in theirs;
      if (mineLiteral !== theirsLiteral) return mineLiteral;
    }
    return false;
  }
}

/** A set of templates, each carrying a value; finds the most specific template for a path. */
export class RouteTable<T> {
  readonly #entries: Array<{ template: PathTemplate; value: T }> = [];

  add(template: string, value: T): void {
    this.#entries.push({ template: new PathTemplate(template), value });
  }

  match(path: string): { template: string; params: Record<string, string>; value: T } | undefined {
    const segments = splitPath(path);
    let best: { template: PathTemplate; params: Record<string, string>; value: T } | undefined;
    for (const entry of this.#entries) {
      const params = entry.template.match(segments);
      if (!params) continue;
      if (!best || entry.template.moreSpecificThan(best.template)) best = { template: entry.template, params, value: entry.value };
    }
    return best ? { template: best.template.template, params: best.params, value: best.value } : undefined;
  }
}

export function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '');
  return trimmed === '' ? [] : trimmed.split('/');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
