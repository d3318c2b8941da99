import type { Lab } from './topology.js';

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

const VIP = '10.0.0.100';
const MACS: Record<string, string> = { red1: '02:00:00:00:01:01', red2: '02:00:00:00:01:02' };

/**
 * The demo's VIP line: red1 (hv1) and red2 (hv2) are both allowed 10.0.0.100 (allowedAddresses),
 * red1 takes it as keepalived's master does (adds it, announces it with a gratuitous ARP), metal
 * (on red's VLAN) pings it, and reddb pings it through red-router, which finds the holder by ARP;
 * then red1 lets go and red2 takes it, and both follow. Which VM answered is read from metal's
 * neighbour table and from the router's. Everything is undone at the end. Returns the line and
 * whether it is what the intent says.
 */
export async function vipProbe(lab: Lab, call: Call): Promise<{ line: string; ok: boolean }> {
  const allow = (vm: string, allowedAddresses: string[]) =>
    call('PATCH', `/v1/endpoints/${vm}?wait=applied&timeout=20s`, { allowedAddresses });
  const take = async (vm: string) => {
    await lab.exec(vm, ['ip', 'addr', 'add', `${VIP}/24`, 'dev', 'eth0']);
    await lab.exec(vm, ['busybox', 'arping', '-U', '-c', '2', '-w', '2', '-I', 'eth0', VIP]);
  };
  const letGo = (vm: string) => lab.exec(vm, `ip addr del ${VIP}/24 dev eth0 2>/dev/null || true`);
  const pings = async (from = 'metal') =>
    (await lab.ping(from, VIP, { count: 3, intervalMs: 200, timeoutS: 1 })).received;
  /** reddb's pings through red-router: the first one of a resolution is spent on it (retried). */
  const routed = async () => {
    for (let i = 0; i < 10; i++)
      if ((await lab.ping('reddb', VIP, { count: 1, timeoutS: 1 })).received) break;
    return pings('reddb');
  };
  const routerHolder = async () => {
    const n = (await call('GET', '/v1/routers/red-router/neighbors')) as {
      neighbors: Array<{ ip: string; endpointId?: string }>;
    };
    return n.neighbors.find((x) => x.ip === VIP)?.endpointId ?? 'nobody';
  };
  const holder = async () => {
    const neigh = await lab.exec('metal', ['ip', 'neigh', 'show', VIP]);
    return Object.keys(MACS).find((vm) => neigh.includes(MACS[vm]!)) ?? 'nobody';
  };
  for (const vm of Object.keys(MACS)) await allow(vm, [VIP]);
  try {
    await take('red1');
    const before = await pings();
    const first = await holder();
    const routedBefore = await routed();
    const routerFirst = await routerHolder();
    await letGo('red1');
    await take('red2');
    // metal keeps red1's MAC until the announcement lands (or its entry goes stale): poll briefly.
    let second = await holder();
    for (let i = 0; i < 25 && second !== 'red2'; i++) {
      await lab.ping('metal', VIP, { count: 1, timeoutS: 1 });
      second = await holder();
    }
    const after = await pings();
    const routedAfter = await pings('reddb');
    const routerSecond = await routerHolder();
    const ok =
      before === 3 &&
      first === 'red1' &&
      after === 3 &&
      second === 'red2' &&
      routedBefore === 3 &&
      routerFirst === 'red1' &&
      routedAfter === 3 &&
      routerSecond === 'red2';
    return {
      line: `VIP: ${VIP} allowed to red1 (hv1) and red2 (hv2): metal reached it on ${first} (${before} of 3 pings), reddb through red-router on ${routerFirst} (${routedBefore} of 3); then, red1 letting go and red2 announcing it as keepalived does, metal on ${second} (${after} of 3), reddb on ${routerSecond} (${routedAfter} of 3)${ok ? '' : ' (SURPRISE)'}`,
      ok,
    };
  } finally {
    for (const vm of Object.keys(MACS)) await letGo(vm);
    for (const vm of Object.keys(MACS)) await allow(vm, []);
  }
}
