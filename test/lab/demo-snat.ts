import type { Lab } from './topology.js';

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

const ROUTER_ON_RED_NET = '10.0.0.254';
const METAL = '10.0.0.3';

/**
 * The demo's SNAT line: metal, the physical host on red's VLAN, loses its route to red-db (as a
 * host of the physical network that knows nothing of the tenant's subnets), so reddb's pings to it
 * go unanswered (the control); then red-router translates red-db's sources to its own address on
 * red-net, with conntrack on hv1 (the chassis of the VLAN binding): reddb reaches metal, which sees
 * 10.0.0.254. Everything is undone at the end. Returns the line and whether it is what the intent says.
 */
export async function snatProbe(lab: Lab, call: Call): Promise<{ line: string; ok: boolean }> {
  const snat = (value: unknown) =>
    call('PATCH', '/v1/routers/red-router?wait=applied&timeout=20s', { snat: value });
  const pings = async () =>
    (await lab.ping('reddb', METAL, { count: 3, intervalMs: 200, timeoutS: 1 })).received;
  await lab.exec('metal', ['ip', 'route', 'del', '10.1.0.0/24']);
  try {
    const before = await pings();
    await snat({ ip: ROUTER_ON_RED_NET });
    const after = await pings();
    const ok = before === 0 && after === 3;
    return {
      line: `SNAT: red-db leaves as ${ROUTER_ON_RED_NET} (red-router's address on red-net, conntrack on hv1): reddb reaches metal, which has no route back to red-db (${after} of 3 pings; ${before} of 3 before)${ok ? '' : ' (SURPRISE)'}`,
      ok,
    };
  } finally {
    await snat(false);
    await lab.exec('metal', ['ip', 'route', 'replace', '10.1.0.0/24', 'via', ROUTER_ON_RED_NET]);
  }
}

const REDDB = '10.1.0.5';
const FORWARDED = 8080;

/**
 * The demo's port-forward line: red-router's SNAT address forwards tcp 8080 to reddb, so metal,
 * which has no route to red-db, opens a connection to 10.0.0.254:8080 and reaches reddb's listener
 * (the control: the same connection before the forward reaches no one). Undone at the end.
 */
export async function portForwardProbe(lab: Lab, call: Call): Promise<{ line: string; ok: boolean }> {
  const snat = (value: unknown) =>
    call('PATCH', '/v1/routers/red-router?wait=applied&timeout=20s', { snat: value });
  // Starts reddb's listener while metal still has its route to red-db.
  await lab.tcpProbe('metal', REDDB, FORWARDED);
  await lab.exec('metal', ['ip', 'route', 'del', '10.1.0.0/24']);
  try {
    await snat({ ip: ROUTER_ON_RED_NET });
    const before = await lab.tcpProbe('metal', ROUTER_ON_RED_NET, FORWARDED);
    await snat({
      ip: ROUTER_ON_RED_NET,
      portForwards: [{ protocol: 'tcp', port: FORWARDED, internalIp: REDDB }],
    });
    const after = await lab.tcpProbe('metal', ROUTER_ON_RED_NET, FORWARDED);
    const ok = before === undefined && after === 'reddb';
    return {
      line: `port forward: ${ROUTER_ON_RED_NET}:${FORWARDED} (red-router's SNAT address) to reddb ${REDDB}:${FORWARDED}: metal, with no route to red-db, connects and ${after ? `${after} answers` : 'no one answers'} (before the forward: ${before ?? 'no one'})${ok ? '' : ' (SURPRISE)'}`,
      ok,
    };
  } finally {
    await snat(false);
    await lab.exec('metal', ['ip', 'route', 'replace', '10.1.0.0/24', 'via', ROUTER_ON_RED_NET]);
  }
}
