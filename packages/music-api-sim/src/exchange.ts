/** What a route handler can do with the request in front of it, whatever serves the HTTP. */
export interface Exchange {
  readonly method: string;
  /** Answers `status`, with `body` as JSON when given. */
  send(status: number, body?: unknown): void;
  /** Answers `status` with `text` as it is, of `contentType` (an HTML page from a proxy). */
  sendText(status: number, contentType: string, text: string): void;
  /** Never answers: the connection stays open until the client gives up or the simulator closes. */
  hang(): void;
  /** Closes the connection without an answer. */
  reset(): void;
}
