import type { Lab } from './topology.js';

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

const FLOATING = '10.0.0.50';
const FIXED = '10.1.0.5';

/**
 * The demo's floating-IP line: metal, the physical host on red's VLAN, loses its route to red-db
 * (as a host of the physical network that knows nothing of the tenant's subnets), then red-router
 * gets reddb's floating IP 10.0.0.50 on red-net: metal reaches reddb there, and reddb's answers
 * leave as 10.0.0.50 (metal could not answer 10.1.0.5). Before the floating IP, metal's pings to
 * it go unanswered (the control). Everything is undone at the end. Returns the line and whether
 * it is what the intent says.
 */
export async function floatingProbe(lab: Lab, call: Call): Promise<{ line: string; ok: boolean }> {
  const floating = (floatingIps: unknown[]) =>
    call('PATCH', '/v1/routers/red-router?wait=applied&timeout=20s', { floatingIps });
  const pings = async () =>
    (await lab.ping('metal', FLOATING, { count: 3, intervalMs: 200, timeoutS: 1 })).received;
  await lab.exec('metal', ['ip', 'route', 'del', '10.1.0.0/24']);
  try {
    const before = await pings();
    await floating([{ ip: FLOATING, fixedIp: FIXED }]);
    const after = await pings();
    const ok = before === 0 && after === 3;
    return {
      line: `floating IP: reddb ${FIXED} as ${FLOATING} on red-net (1:1 NAT on red-router): metal, with no route to red-db, reaches it (${after} of 3 pings; ${before} of 3 before)${ok ? '' : ' (SURPRISE)'}`,
      ok,
    };
  } finally {
    await floating([]);
    await lab.exec('metal', ['ip', 'route', 'replace', '10.1.0.0/24', 'via', '10.0.0.254']);
  }
}
