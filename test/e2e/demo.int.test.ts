import { expect, it } from 'vitest';
import { formatDrops, formatMatrix, runDemo } from '../lab/demo-scenario.js';
import { expectConverged } from './converged.js';

// The demo is part of the suite: every path it prints must be as the intent says.
it('runs the demo with no surprises: isolation with overlapping IPs, a security group, a VLAN binding, a router', async () => {
  const lines: string[] = [];
  let converged = false;
  const { probes, surprises, drops } = await runDemo(
    (l) => lines.push(l),
    async (controller, lab) => {
      // At the end, with a VLAN binding and a security group in place, every bridge is exact.
      await expectConverged(lab, controller.engine);
      converged = true;
    },
  );
  if (surprises) console.log(formatMatrix(probes));
  expect(probes.length).toBe(13);
  // The routed paths: red-net -> red-db across the hypervisors, as weft trace says too.
  expect(probes.find((p) => p.from === 'red1' && p.to === '10.1.0.5')?.trace).toBe(
    'delivered hv1>hv2 via red-router',
  );
  // Routed to the physical host behind the VLAN: red-router learned its MAC by ARP, weft trace
  // follows the learned flows out of its VLAN port on hv1.
  expect(probes.find((p) => p.from === 'reddb' && p.to === '10.0.0.3')).toMatchObject({
    got: 'open',
    trace: 'delivered hv2>hv1 via red-router',
  });
  // weft trace explains every closed path, and the matrix prints why.
  for (const p of probes)
    expect(p.trace, `${p.from} ${p.to} ${p.what}`).toMatch(/^(delivered|answered|dropped|not-delivered) hv/);
  expect(probes.find((p) => p.from === 'blue1' && p.what === 'tcp/9090')?.why).toMatch(
    /dropped on hv2 in table ingress-sg-ct \(56\): no ingress rule of the security groups of endpoint blue2/,
  );
  expect(formatMatrix(probes)).toContain('why closed (weft trace):');
  // The switches counted the drops the trace explains: blue2's security group, on hv2.
  expect(formatDrops(drops)).toMatch(
    /^ {2}hv2 +ingress-sg-ct +\d+ {2}no ingress security-group rule admits it \(default deny\)$/m,
  );
  // The DHCP line says what weft answered red2.
  expect(lines).toContain(
    'DHCP: red2 dropped its addresses and asked; weft answered from the intent: 10.0.0.2/24, gateway 10.0.0.254, MTU 1450, DNS 10.0.0.3; DHCPv6: fd00:100::2',
  );
  expect(lines).toContain(
    'traceroute red1 -> reddb: 1 10.0.0.254 (red-router answers time exceeded), 2 10.1.0.5',
  );
  expect(lines.find((l) => l.startsWith('metal'))).toBe(
    'metal (VLAN 42 on hv1) speaks first: reaches red2 on hv2 and its gateway on red-router',
  );
  // The rate limit: red2's ingress meter held 500 KB from red1 to about 2 Mbit/s.
  expect(lines.find((l) => l.startsWith('rate limit'))).toMatch(
    /^rate limit: red2 may receive 2000 kbit\/s \(burst 200 kbit\): 500 KB from red1 took \d+\.\d s at \d+ kbit\/s \(unlimited: \d+ kbit\/s\)$/,
  );
  expect(lines.find((l) => l.startsWith('IPv6'))).toMatch(
    /^IPv6: red1 fd00:100::1 -> reddb fd00:101::5 through red-router, hop limit 63; both learned their default route \(via fe80::857:72ff:fe00:64\) from its router advertisements; reddb -> metal fd00:100::3 \(found by neighbour discovery behind VLAN 42: 3 of 3 pings\)$/,
  );
  // Port mirroring: reddb, a capture on the other hypervisor, got a copy of each packet of red1's pings.
  expect(lines).toContain(
    'mirror: red1 copied to reddb (red-db network, hv2): tcpdump there saw 3 of 3 echo requests and 3 of 3 replies of red1 -> red2',
  );
  // A VIP two VMs share (allowed addresses) follows a keepalived-style failover across hypervisors.
  expect(lines).toContain(
    'VIP: 10.0.0.100 allowed to red1 (hv1) and red2 (hv2): metal reached it on red1 (3 of 3 pings), reddb through red-router on red1 (3 of 3); then, red1 letting go and red2 announcing it as keepalived does, metal on red2 (3 of 3), reddb on red2 (3 of 3)',
  );
  // A floating IP: the physical host, with no route to the tenant's db network, reaches reddb by it.
  expect(lines).toContain(
    'floating IP: reddb 10.1.0.5 as 10.0.0.50 on red-net (1:1 NAT on red-router): metal, with no route to red-db, reaches it (3 of 3 pings; 0 of 3 before)',
  );
  // SNAT: reddb reaches the physical host, which has no route back to red-db, from the router's address.
  expect(lines).toContain(
    "SNAT: red-db leaves as 10.0.0.254 (red-router's address on red-net, conntrack on hv1): reddb reaches metal, which has no route back to red-db (3 of 3 pings; 0 of 3 before)",
  );
  // A port forward of the SNAT address: the physical host reaches reddb's listener through it.
  expect(lines).toContain(
    "port forward: 10.0.0.254:8080 (red-router's SNAT address) to reddb 10.1.0.5:8080: metal, with no route to red-db, connects and reddb answers (before the forward: no one)",
  );
  // blue's group logs what it denies: blue1's closed probe to blue2:9090 is in the log, by name.
  expect(lines.find((l) => l.startsWith('security-group log'))).toMatch(
    /^security-group log \(weft sg-log\): blue2 on hv2 denied ingress tcp 10\.0\.0\.1:\d+ -> 10\.0\.0\.2:9090 \(blue's group web logs what it denies\)$/,
  );
  expect(surprises).toBe(0);
  expect(converged).toBe(true);
}, 180_000);
