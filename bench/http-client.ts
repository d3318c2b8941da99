import http from 'node:http';

// biome-ignore lint/suspicious/noExplicitAny: answers are whatever JSON the route returns
export type JsonCall = ((method: string, path: string, body?: unknown) => Promise<any>) & { close(): void };

/**
 * A small JSON client over node:http with one keep-alive connection, for benchmarks that time REST
 * calls from inside the process under test: fetch (undici) costs ~0.5 ms more per call here, time
 * that would otherwise be counted as the server's.
 */
export function httpClient(base: string, token: string): JsonCall {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const call = (method: string, path: string, body?: unknown) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        `${base}${path}`,
        {
          method,
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            text += d;
          });
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 400)
              reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
            else resolve(text === '' ? undefined : JSON.parse(text));
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  return Object.assign(call, { close: () => agent.destroy() });
}
