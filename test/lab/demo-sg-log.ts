import type { SgLogEntry } from '../../controller/sg-log/sg-log-book.js';

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

const PORT = 9090;

/**
 * The demo's security-group log line: blue's group `web` logs what it denies, so blue1's closed
 * probe to blue2's tcp/9090 (in the matrix above) is in weft's log as it happened, named by
 * endpoint and hypervisor. The switch sends the copies a moment after the packet: asked a few
 * times. Returns the line and whether the log holds that denial.
 */
export async function sgLogProbe(call: Call): Promise<{ line: string; ok: boolean }> {
  let denied: SgLogEntry | undefined;
  for (let i = 0; i < 20 && !denied; i++) {
    const page = (await call('GET', '/v1/security-group-log?endpoint=blue2&verdict=denied&limit=1000')) as {
      entries: SgLogEntry[];
    };
    denied = page.entries.find((e) => e.protocol === 'tcp' && e.dstPort === PORT);
    if (!denied) await new Promise((r) => setTimeout(r, 250));
  }
  if (!denied)
    return { line: `security-group log: no denial of tcp/${PORT} to blue2 logged (SURPRISE)`, ok: false };
  const e = denied;
  return {
    line: `security-group log (weft sg-log): ${e.endpointId} on ${e.chassis} ${e.verdict} ${e.direction} ${e.protocol} ${e.src}:${e.srcPort} -> ${e.dst}:${e.dstPort} (blue's group web logs what it denies)`,
    ok: true,
  };
}
