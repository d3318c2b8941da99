/** A small HTTP client for the weft REST API, used by the `weft <resource>` commands. */

export const defaultApi = 'http://127.0.0.1:8080';

/** A call that did not succeed: the API's own error (status + code + message) or a transport failure. */
export class ApiCallError extends Error {
  override name = 'ApiCallError';
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** `message [field] (HTTP status code)`: how every command prints a failed call. */
export function describeApiError(err: ApiCallError): string {
  const where = err.field ? ` [${err.field}]` : '';
  const http = err.status === undefined ? '' : ` (HTTP ${[err.status, err.code].filter(Boolean).join(' ')})`;
  return `${err.message}${where}${http}`;
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
}

export class ApiClient {
  readonly base: string;
  constructor(
    api: string,
    private readonly token: string | undefined,
  ) {
    this.base = api.replace(/\/+$/, '');
  }

  async request<T = unknown>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiCallError(
        `cannot reach the API at ${this.base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      );
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    if (!res.ok) throw errorOf(res.status, body);
    return { status: res.status, body: body as T, headers: res.headers };
  }
}

const errorOf = (status: number, body: unknown): ApiCallError => {
  const e = (body as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
  if (e?.message) return new ApiCallError(e.message, status, e.code, e.field);
  return new ApiCallError(
    `HTTP ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`,
    status,
  );
};

/** The client a command's `--api` / `--token` flags ask for, else WEFT_API / WEFT_TOKEN. */
export const clientFromFlags = (
  values: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): ApiClient =>
  new ApiClient(
    (values.api as string | undefined) ?? env.WEFT_API ?? defaultApi,
    (values.token as string | undefined) ?? env.WEFT_TOKEN,
  );
