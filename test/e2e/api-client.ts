import { ApiClient } from '../../northbound/cli/client.js';

/** The CLI's REST client, shortened for tests: each call resolves to the JSON body. */
export function apiClient(baseUrl: string, token: string) {
  const client = new ApiClient(baseUrl, token);
  const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
    ((await client.request<Record<string, unknown>>(method, path, { body })).body ?? {}) as Record<
      string,
      unknown
    >;
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body: unknown) => call('POST', path, body),
    put: (path: string, body: unknown) => call('PUT', path, body),
    patch: (path: string, body: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}
