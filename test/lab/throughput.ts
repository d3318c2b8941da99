import { execIn } from './traffic.js';

/**
 * Bulk TCP between lab namespaces, to see a rate limit at work: a sink in one namespace counts
 * what one connection brings and reports bytes and time from first byte to end; a sender in
 * another pushes N bytes as fast as TCP lets it. Both are node programs (see traffic.ts) that
 * exit on their own (a hard cap each), run through `ip netns exec` and killed on timeout.
 */

const SINK = `
const net = require('node:net');
const port = Number(process.argv[1]);
setTimeout(() => process.exit(3), Number(process.argv[2]));
const srv = net.createServer((s) => {
  let bytes = 0, first = 0;
  s.on('data', (c) => { if (!first) first = Date.now(); bytes += c.length; });
  s.on('end', () => {
    const ms = Date.now() - first;
    s.end(JSON.stringify({ bytes, ms }), () => { process.stdout.write(JSON.stringify({ bytes, ms })); process.exit(0); });
  });
  s.on('error', () => process.exit(2));
});
srv.listen(port);
`;

const SENDER = `
const net = require('node:net');
const [ip, port, total, cap] = process.argv.slice(1);
const deadline = Date.now() + Number(cap);
setTimeout(() => process.exit(3), Number(cap));
const chunk = Buffer.alloc(65536, 120);
function attempt() {
  const s = net.connect(Number(port), ip);
  s.on('error', (e) => {
    if (e.code === 'ECONNREFUSED' && Date.now() < deadline) setTimeout(attempt, 50);
    else { process.stderr.write(e.message); process.exit(1); }
  });
  s.on('connect', () => {
    let left = Number(total);
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!s.write(n === chunk.length ? chunk : chunk.subarray(0, n))) { s.once('drain', pump); return; }
      }
      s.end();
    };
    pump();
  });
  let out = '';
  s.on('data', (c) => { out += c; });
  s.on('end', () => { process.stdout.write(out); process.exit(0); });
}
attempt();
`;

export interface Transfer {
  bytes: number;
  ms: number;
  /** Goodput seen by the receiver, kbit/s. */
  kbps: number;
}

/**
 * Sends `bytes` over one TCP connection from namespace `fromNs` to `toIp`:`port`, received in
 * namespace `toNs`; resolves with what the receiver measured. Rejects (naming both ends) when the
 * transfer does not finish within `timeoutMs`.
 */
export async function tcpTransfer(
  fromNs: string,
  toNs: string,
  toIp: string,
  port: number,
  bytes: number,
  timeoutMs = 30_000,
): Promise<Transfer> {
  const sink = execIn(
    toNs,
    process.execPath,
    ['-e', SINK, String(port), String(timeoutMs)],
    timeoutMs + 5000,
  );
  const sender = execIn(
    fromNs,
    process.execPath,
    ['-e', SENDER, toIp, String(port), String(bytes), String(timeoutMs)],
    timeoutMs + 5000,
  );
  const [got, sent] = await Promise.all([sink, sender]);
  if (got.code !== 0 || sent.code !== 0)
    throw new Error(
      `TCP transfer ${fromNs} -> ${toNs} (${toIp}:${port}) failed: sink ${got.code} ${got.out.trim()}, sender ${sent.code} ${sent.out.trim()}`,
    );
  const r = JSON.parse(got.out) as { bytes: number; ms: number };
  if (r.bytes !== bytes)
    throw new Error(`TCP transfer ${fromNs} -> ${toNs}: ${r.bytes} of ${bytes} bytes arrived`);
  return { ...r, kbps: Math.round((r.bytes * 8) / Math.max(1, r.ms)) };
}
