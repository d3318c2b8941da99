/**
 * Where weft listens for switches: `tcp:HOST:PORT`, `ssl:HOST:PORT` or `unix:PATH`.
 * Parsed once at startup so a typo fails loudly before any socket is opened.
 */
export type ListenAddress =
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'ssl'; host: string; port: number }
  | { kind: 'unix'; path: string };

export class ListenAddressError extends Error {
  override name = 'ListenAddressError';
}

export function parseListenAddress(text: string): ListenAddress {
  const colon = text.indexOf(':');
  if (colon < 0)
    throw new ListenAddressError(`'${text}': expected tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH`);
  const scheme = text.slice(0, colon);
  const rest = text.slice(colon + 1);
  if (scheme === 'unix') {
    if (rest === '') throw new ListenAddressError(`'${text}': unix: needs a socket path`);
    return { kind: 'unix', path: rest };
  }
  if (scheme !== 'tcp' && scheme !== 'ssl') {
    throw new ListenAddressError(`'${text}': unknown scheme '${scheme}' (use tcp, ssl or unix)`);
  }
  const { host, port } = parseHostPort(rest, text);
  return { kind: scheme, host, port };
}

/** `HOST:PORT`, `[v6]:PORT`; the port is 0..65535 (0 = any free port, handy in tests). */
export function parseHostPort(text: string, whole = text): { host: string; port: number } {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0 || text[end + 1] !== ':') throw new ListenAddressError(`'${whole}': expected [IPV6]:PORT`);
    host = text.slice(1, end);
    portText = text.slice(end + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw new ListenAddressError(`'${whole}': expected HOST:PORT`);
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  if (host === '') throw new ListenAddressError(`'${whole}': empty host`);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new ListenAddressError(`'${whole}': port '${portText}' is not a number 0-65535`);
  }
  return { host, port: Number(portText) };
}

export const formatListenAddress = (a: ListenAddress): string =>
  a.kind === 'unix'
    ? `unix:${a.path}`
    : `${a.kind}:${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
