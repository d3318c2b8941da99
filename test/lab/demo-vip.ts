import type { Lab } from './topology.js';

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

const VIP = '10.0.0.100';
const MACS: Record<string, string> = { red1: '02:00:00:00:01:01', red2: '02:00:00:00:01:02' };

/**
 * The demo's VIP line: red1 (hv1) and red2 (hv2) are both allowed 10.0.0.100 (allowedAddresses),
 * red1 takes it as keepalived's master does (adds it, announces it with a gratuitous ARP), metal
 * pings it; then red1 lets go and red2 takes it, and metal's pings follow. Which VM answered is
 * read from metal's neighbour table. Everything is undone at the end. Returns the line and
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
  const pings = async () =>
    (await lab.ping('metal', VIP, { count: 3, intervalMs: 200, timeoutS: 1 })).received;
  const holder = async () => {
    const neigh = await lab.exec('metal', ['ip', 'neigh', 'show', VIP]);
    return Object.keys(MACS).find((vm) => neigh.includes(MACS[vm]!)) ?? 'nobody';
  };
  for (const vm of Object.keys(MACS)) await allow(vm, [VIP]);
  try {
    await take('red1');
    const before = await pings();
    const first = await holder();
    await letGo('red1');
    await take('red2');
    // metal keeps red1's MAC until the announcement lands (or its entry goes stale): poll briefly.
    let second = await holder();
    for (let i = 0; i < 25 && second !== 'red2'; i++) {
      await lab.ping('metal', VIP, { count: 1, timeoutS: 1 });
      second = await holder();
    }
    const after = await pings();
    const ok = before === 3 && first === 'red1' && after === 3 && second === 'red2';
    return {
      line: `VIP: ${VIP} allowed to red1 (hv1) and red2 (hv2): metal reached it on ${first} (${before} of 3 pings), then on ${second} (${after} of 3) after red1 let go and red2 announced it, as keepalived does${ok ? '' : ' (SURPRISE)'}`,
      ok,
    };
  } finally {
    for (const vm of Object.keys(MACS)) await letGo(vm);
    for (const vm of Object.keys(MACS)) await allow(vm, []);
  }
}
