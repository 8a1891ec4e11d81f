/**
 * A TypeScript client for the Remit API. The types (src/schema.gen.ts) are generated from
 * api/openapi.yaml by openapi-typescript; requests are made by openapi-fetch; this file adds what
 * the Go client's helpers (client/client.go) add:
 *
 * - every call authenticates with the API key (Authorization: Bearer);
 * - every /v1 call acts in the client's scope: `environment` and `merchantAccountId` fill the
 *   query when the call leaves them out (a call's own values win), so the types make them optional;
 * - every POST, PUT and PATCH under /v1 carries an Idempotency-Key, generated per call unless the call
 *   gives one, so a retry of the same call with the same key is safe;
 * - an answer that is not 2xx rejects with a RemitError: the error envelope's code, message,
 *   request ID, docs URL, details and the field problems of a 422.
 *
 *   const remit = createRemitClient({ baseUrl: "http://127.0.0.1:8080", apiKey, merchantAccountId });
 *   const { data: customer } = await remit.post("/v1/customers", { body: { name: "Acme" } });
 *   const page = await remit.get("/v1/events", { params: { query: { limit: 10 } } });
 *
 * Regenerate src/schema.gen.ts with `npm run generate` after changing the contract (CI fails when
 * the committed file drifts).
 */
import createClient, { type Client, type FetchResponse, type MaybeOptionalInit, type Middleware } from "openapi-fetch";
import type { components, operations, paths } from "./schema.gen.js";

export type { components, operations, paths };
/** The contract's schemas by name: Schemas["Customer"], Schemas["Invoice"], ... */
export type Schemas = components["schemas"];

/** The environments a merchant account lives in. */
export type Environment = "sandbox" | "production";

type ScopeKey = "environment" | "merchantAccountId";
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
/** The query of a /v1 operation with the scope optional (the client fills it). */
type ScopedQuery<Q> = Omit<Q, ScopeKey> & Partial<Pick<Q, Extract<keyof Q, ScopeKey>>>;
type ScopedParameters<P> = P extends { query: infer Q }
  ? Omit<P, "query"> & (RequiredKeys<ScopedQuery<Q>> extends never ? { query?: ScopedQuery<Q> } : { query: ScopedQuery<Q> })
  : P;
type ScopedOperation<O> = O extends { parameters: infer P } ? Omit<O, "parameters"> & { parameters: ScopedParameters<P> } : O;
/** The contract's paths as the client takes them: the scope of /v1 calls is optional. */
export type ScopedPaths = {
  [P in keyof paths]: { [M in keyof paths[P]]: M extends "parameters" ? paths[P][M] : ScopedOperation<paths[P][M]> };
};

type Method = "get" | "put" | "post" | "delete" | "patch";
type PathsWith<M extends Method> = {
  [P in keyof ScopedPaths]: ScopedPaths[P] extends Record<M, {}> ? P : never;
}[keyof ScopedPaths];
type Init<P extends keyof ScopedPaths, M extends Method> = MaybeOptionalInit<ScopedPaths[P], M>;
type InitArg<I> = RequiredKeys<I> extends never ? [init?: I & { [key: string]: unknown }] : [init: I & { [key: string]: unknown }];
/** What a call resolves to: the 2xx answer's body (for JSON, the envelope {data, requestId}). */
export type Answer<P extends keyof ScopedPaths, M extends Method, I> = NonNullable<
  FetchResponse<ScopedPaths[P][M] & Record<string | number, any>, I, "application/json">["data"]
>;
type Call<M extends Method> = <P extends PathsWith<M>, I extends Init<P, M>>(url: P, ...init: InitArg<I>) => Promise<Answer<P, M, I>>;

/** Options of createRemitClient. */
export interface RemitOptions {
  /** The server, for example http://127.0.0.1:8080. */
  baseUrl: string;
  /** An API key (`remit bootstrap` or `remit apikey create` prints one). */
  apiKey: string;
  /** The environment of /v1 calls that name none (default sandbox). */
  environment?: Environment;
  /** The merchant account of /v1 calls that name none. */
  merchantAccountId?: string;
  /** A fetch to use instead of globalThis.fetch. */
  fetch?: (input: Request) => Promise<Response>;
  /** Makes the Idempotency-Key of a write that gives none (default: "remit-ts-" and a random UUID). */
  idempotencyKey?: () => string;
}

/** A Remit client: typed calls that resolve with the 2xx answer and reject with RemitError. */
export interface RemitClient {
  get: Call<"get">;
  post: Call<"post">;
  put: Call<"put">;
  patch: Call<"patch">;
  delete: Call<"delete">;
  /** The underlying openapi-fetch client, with the same key, scope, keys and errors. */
  api: Client<ScopedPaths, "application/json">;
}

/** One problem of a 422 answer. */
export type FieldProblem = Schemas["FieldProblem"];
/** The error codes of the error envelope; each pairs with one HTTP status (see /docs/errors). */
export type ErrorCode = Schemas["ErrorEnvelope"]["error"]["code"];

/** An answer of the API that is not 2xx: the error envelope of /docs/errors. */
export class RemitError extends Error {
  override readonly name = "RemitError";
  /** The HTTP status. */
  readonly status: number;
  /** error.code: one of ErrorCode. */
  readonly code: ErrorCode;
  /** error.requestId (also the Request-Id header): quote it in reports. */
  readonly requestId?: string;
  /** error.docsUrl: the errors guide's section for the code. */
  readonly docsUrl?: string;
  /** error.details as sent. */
  readonly details: Schemas["ErrorDetails"];
  /** error.details.fields: every problem of a 422. */
  readonly fields: FieldProblem[];
  /** The Idempotency-Key the request carried, to retry it safely. */
  readonly idempotencyKey?: string;
  /** The Retry-After header of a 429. */
  readonly retryAfter?: string;

  constructor(status: number, envelope: Schemas["ErrorEnvelope"], headers: Headers, idempotencyKey?: string) {
    const e = envelope.error;
    const problems = (e.details?.fields ?? []).map((f) => `; ${f.field}: ${f.message}`).join("");
    super(`remit: ${status} ${e.code}: ${e.message}${problems}${e.requestId ? ` (request ${e.requestId})` : ""}`);
    this.status = status;
    this.code = e.code;
    this.requestId = e.requestId ?? headers.get("Request-Id") ?? undefined;
    this.docsUrl = e.docsUrl;
    this.details = e.details ?? {};
    this.fields = e.details?.fields ?? [];
    this.idempotencyKey = idempotencyKey;
    this.retryAfter = headers.get("Retry-After") ?? undefined;
  }

  /** details.reason (for example duplicate_id, idempotency_key_reused, invalid_state). */
  reason(): string | undefined {
    return this.details.reason;
  }

  /** details.currentState of a 409 on a resource whose state forbids the action. */
  currentState(): string | undefined {
    return this.details.currentState;
  }

  /** The problem with the named field of a 422, if any. */
  field(name: string): FieldProblem | undefined {
    return this.fields.find((f) => f.field === name);
  }
}

/** Whether err is a RemitError with the given code. */
export function isRemitError(err: unknown, code?: ErrorCode): err is RemitError {
  return err instanceof RemitError && (code === undefined || err.code === code);
}

/** A fresh random Idempotency-Key, as the client makes for writes that give none. */
export function newIdempotencyKey(): string {
  return "remit-ts-" + crypto.randomUUID();
}

const isV1 = (url: URL) => url.pathname.includes("/v1/");

/** Returns a client of the Remit API at options.baseUrl. */
export function createRemitClient(options: RemitOptions): RemitClient {
  const api = createClient<ScopedPaths, "application/json">({ baseUrl: options.baseUrl, fetch: options.fetch });
  const environment = options.environment ?? "sandbox";
  const makeKey = options.idempotencyKey ?? newIdempotencyKey;
  const middleware: Middleware = {
    async onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${options.apiKey}`);
      const url = new URL(request.url);
      if (!isV1(url)) {
        return request;
      }
      if ((request.method === "POST" || request.method === "PUT" || request.method === "PATCH") && !request.headers.has("Idempotency-Key")) {
        request.headers.set("Idempotency-Key", makeKey());
      }
      let scoped = false;
      if (!url.searchParams.get("environment")) {
        url.searchParams.set("environment", environment);
        scoped = true;
      }
      if (options.merchantAccountId && !url.searchParams.get("merchantAccountId")) {
        url.searchParams.set("merchantAccountId", options.merchantAccountId);
        scoped = true;
      }
      if (!scoped) {
        return request;
      }
      // A Request's URL cannot change: the same request, at the scoped URL.
      const body = request.body === null ? undefined : await request.arrayBuffer();
      return new Request(url, { method: request.method, headers: request.headers, body, signal: request.signal });
    },
    async onResponse({ request, response }) {
      if (response.ok) {
        return response;
      }
      const key = request.headers.get("Idempotency-Key") ?? undefined;
      const text = await response.text();
      let envelope: Schemas["ErrorEnvelope"];
      try {
        envelope = JSON.parse(text) as Schemas["ErrorEnvelope"];
        if (typeof envelope?.error?.code !== "string") throw new Error("no error envelope");
      } catch {
        // Not the envelope (a proxy's page, a plain-text 400 of the HTTP server): keep what came.
        const code: ErrorCode = response.status >= 500 ? "internal_error" : "bad_request";
        envelope = { error: { code, message: text.slice(0, 500) || response.statusText } };
      }
      throw new RemitError(response.status, envelope, response.headers, key);
    },
  };
  api.use(middleware);

  // Each call resolves with data (a non-2xx answer has already rejected in onResponse).
  const call =
    <M extends Method>(method: Uppercase<M>): Call<M> =>
    (async (url: string, init?: Record<string, unknown>) => {
      const res = (await (api[method] as (u: string, i?: unknown) => Promise<{ data?: unknown }>)(url, init)) as { data?: unknown };
      return res.data;
    }) as unknown as Call<M>;
  return { get: call("GET"), post: call("POST"), put: call("PUT"), patch: call("PATCH"), delete: call("DELETE"), api };
}
