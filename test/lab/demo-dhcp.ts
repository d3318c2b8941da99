import { runDhcpClient } from './dhcp-client.js';
import { runDhcp6Client } from './dhcp6-client.js';
import type { Lab } from './topology.js';

/**
 * The demo's DHCP line: red2 forgets its addresses and asks for them, as a freshly booted VM
 * would, with a real DHCP client (busybox udhcpc) and a real DHCPv6 one (ISC dhclient -6); weft
 * answers both from the intent (its endpoint's 10.0.0.2 and fd00:100::2, red-net's gateway, DNS,
 * MTU). red2 keeps the default route it was handed. `dir` holds the clients' files. Returns the
 * line and whether it is what the intent says.
 */
export async function dhcpProbe(lab: Lab, dir: string): Promise<{ line: string; ok: boolean }> {
  const lease = (await runDhcpClient(lab, 'red2', dir)).bound;
  const leased =
    lease?.ip === '10.0.0.2' && lease.subnet === '255.255.255.0' && lease.router === '10.0.0.254';
  if (lease?.router) await lab.exec('red2', ['ip', 'route', 'add', 'default', 'via', lease.router]);
  const lease6 = (await runDhcp6Client(lab, 'red2', dir)).bound;
  const ok = leased && lease6?.ip6 === 'fd00:100::2';
  return {
    line: ok
      ? `DHCP: red2 dropped its addresses and asked; weft answered from the intent: ${lease.ip}/24, gateway ${lease.router}, MTU ${lease.mtu}, DNS ${lease.dns}; DHCPv6: ${lease6?.ip6}`
      : `DHCP: red2 asked for its addresses and got ${lease ? `${lease.ip} via ${lease.router}` : 'no answer'}, DHCPv6 ${lease6?.ip6 ?? 'no answer'} (SURPRISE)`,
    ok,
  };
}
