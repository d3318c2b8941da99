import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRule } from '../../northbound/cli/rule-flags.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

let h: Harness;
let api: string;

beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await h.close();
});

const weft = (args: string, env: Record<string, string> = {}) =>
  runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN, ...env });

describe('weft resource commands over the API', () => {
  it('lists every resource command in weft --help', async () => {
    const r = await weft('--help');
    for (const word of [
      'tenant',
      'network',
      'endpoint',
      'security-group',
      'acl',
      'chassis',
      'vlan-binding',
      'router',
      'token',
      'status',
    ]) {
      expect(r.out).toMatch(new RegExp(`\\n  ${word}\\s`));
    }
    expect(r.out).toContain('create/list/show/update/delete chassis over the REST API');
  });

  it('creates, lists (table), shows, updates and deletes a network', async () => {
    expect((await weft('tenant create --id t1 --name one')).code).toBe(0);
    const created = await weft(
      'network create --id n1 --tenant t1 --name blue --vni 5001 --subnet 10.0.0.0/24',
    );
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^id:\s+n1$/m);
    expect(created.out).toMatch(/^vni:\s+5001$/m);
    const list = await weft('network list');
    expect(list.out.split('\n')[0]).toMatch(/^ID\s+TENANT\s+NAME\s+VNI\s+MTU\s+SUBNETS\s+DHCP\s+REV$/);
    expect(list.out).toMatch(/^n1\s+t1\s+blue\s+5001\s+\d+\s+10\.0\.0\.0\/24\s+-\s+\d+$/m);
    const updated = await weft('network update n1 --name bluer --json');
    expect(JSON.parse(updated.out)).toMatchObject({ id: 'n1', name: 'bluer' });
    const shown = JSON.parse((await weft('network show n1 --json')).out);
    expect(shown.name).toBe('bluer');
    const deleted = await weft('network delete n1');
    expect(deleted).toMatchObject({ code: 0 });
    expect(deleted.out).toMatch(/^deleted network n1 \(revision \d+\)\n$/);
  });

  it('turns DHCP on with its options (--dhcp), shows it in the list, and off again', async () => {
    const on = await weft(
      'network create --id nd --tenant t1 --name dhcp --subnet 10.9.0.0/24 --dhcp router=10.9.0.1,dns=9.9.9.9+1.1.1.1,domain=corp.example,lease=600 --json',
    );
    expect(on.code, on.err).toBe(0);
    expect(JSON.parse(on.out).dhcp).toEqual({
      enabled: true,
      router: '10.9.0.1',
      dnsServers: ['9.9.9.9', '1.1.1.1'],
      domainName: 'corp.example',
      leaseSeconds: 600,
    });
    expect((await weft('network list')).out).toMatch(
      /^nd\s+t1\s+dhcp\s+\d+\s+\d+\s+10\.9\.0\.0\/24\s+on \(gw 10\.9\.0\.1\)\s+\d+$/m,
    );
    const off = await weft('network update nd --dhcp off --json');
    expect(JSON.parse(off.out).dhcp).toMatchObject({ enabled: false });
    const bad = await weft('network update nd --dhcp router=10.8.0.1');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('dhcp.router: 10.8.0.1 is outside the IPv4 subnets of the network');
    expect((await weft('network update nd --dhcp gateway=10.9.0.1')).err).toContain(
      "--dhcp: unknown key 'gateway' (router, dns, domain, lease, ipv6)",
    );
    expect((await weft('network update nd --dhcp ipv6=yes')).err).toContain(
      "--dhcp: ipv6 'yes' is not on or off",
    );
    // DHCPv6 too: the network needs an IPv6 subnet for it; the list says so.
    expect((await weft('network update nd --dhcp ipv6=on')).err).toContain(
      'dhcp.ipv6: serving DHCPv6 needs an IPv6 subnet',
    );
    const v6 = await weft('network update nd --subnet 10.9.0.0/24 --subnet fd09::/64 --dhcp ipv6=on --json');
    expect(v6.code, v6.err).toBe(0);
    expect(JSON.parse(v6.out).dhcp).toMatchObject({ enabled: true, ipv6: true });
    expect((await weft('network list')).out).toMatch(/^nd\s+t1\s+dhcp\s+.*\s+on\+v6\s+\d+$/m);
    expect((await weft('network update nd --dhcp lease=soon')).err).toContain("lease 'soon' is not a number");
    expect((await weft('network update nd --dhcp router')).code).toBe(2);
    expect((await weft('network delete nd')).code).toBe(0);
  });

  it('prints the API error message and exits 1', async () => {
    const r = await weft('network create --tenant t1 --name x --vni 16777215');
    expect(r.code).toBe(1);
    expect(r.err).toBe("weft network: body 'vni' must be <= 16777214 [vni] (HTTP 400 invalid)\n");
    const missing = await weft('endpoint show nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("endpoint 'nope' not found");
    expect(missing.err).toContain('HTTP 404 not_found');
  });

  it('exits 1 naming 401 without a token, and with a stale --if-match names 412', async () => {
    const r = await weft('tenant list', { WEFT_TOKEN: '' });
    expect(r.code).toBe(1);
    expect(r.err).toContain('missing bearer token');
    const t = JSON.parse((await weft('tenant create --name staler --json')).out);
    expect((await weft(`tenant update ${t.id} --description a --if-match ${t.revision}`)).code).toBe(0);
    const stale = await weft(`tenant update ${t.id} --description b --if-match ${t.revision}`);
    expect(stale.code).toBe(1);
    expect(stale.err).toContain('HTTP 412 precondition_failed');
  });

  it('exits 1 with a clear message when the API is unreachable', async () => {
    // A port that was just free: nothing listens there any more.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const r = await weft(`tenant list --api http://127.0.0.1:${port}`);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`weft tenant: cannot reach the API at http://127.0.0.1:${port}: ECONNREFUSED\n`);
  });

  it('exits 2 for usage mistakes, naming them', async () => {
    expect((await weft('network frobnicate')).err).toContain("unknown action 'frobnicate'");
    expect((await weft('network show')).code).toBe(2);
    expect((await weft('network create --vni twelve')).err).toContain(
      "--vni must be an integer, got 'twelve'",
    );
    expect((await weft('network create --colour red')).code).toBe(2);
    expect((await weft('network update n1 --vni 5')).err).toContain('--vni cannot be changed by update');
    expect((await weft('endpoint create --port-security maybe')).err).toContain(
      '--port-security must be on or off',
    );
    expect((await weft('tenant create --data [1]')).err).toContain('--data must be a JSON object');
  });

  it('creates endpoints, security groups with --rule, ACLs with --ports, chassis and VLAN bindings', async () => {
    expect((await weft('network create --id n2 --tenant t1 --name green --subnet 10.1.0.0/24')).code).toBe(0);
    const sg = await weft(
      "security-group create --id web --tenant t1 --name web --rule 'ingress,ipv4,tcp,80-443,remote=0.0.0.0/0'",
    );
    expect(sg.code, sg.err).toBe(0);
    const ep = await weft(
      'endpoint create --id vm1 --network n2 --ip 10.1.0.5 --security-group web --port-security on',
    );
    expect(ep.code, ep.err).toBe(0);
    const eps = await weft('endpoint list --network n2');
    expect(eps.out).toMatch(/^vm1\s+n2\s+02:[0-9a-f:]{14}\s+10\.1\.0\.5\s+vm1\s+no\s+-\s+\d+$/m);
    const acl = await weft(
      'acl create --network n2 --priority 10 --direction ingress --action drop --protocol tcp --ports 22 --json',
    );
    expect(JSON.parse(acl.out)).toMatchObject({ portMin: 22, portMax: 22, action: 'drop' });
    expect(
      (await weft('chassis create --id hv1 --name hv1 --tunnel-ip 192.0.2.1 --offload asap2')).code,
    ).toBe(0);
    const vb = await weft('vlan-binding create --chassis hv1 --port eth1 --vlan 100 --network n2');
    expect(vb.code, vb.err).toBe(0);
    expect((await weft('vlan-binding list')).out).toMatch(/\s+hv1\s+eth1\s+100\s+n2\s+/);
    expect((await weft('security-group list')).out).toMatch(
      /^web\s+t1\s+web\s+-\s+ingress tcp 80-443 0\.0\.0\.0\/0\s+\d+$/m,
    );
    const cascade = await weft('network delete n2 --cascade');
    expect(cascade.out).toMatch(/^deleted network n2 and \d+ dependants/);
  });

  it('mints a tenant token that then sees only its tenant', async () => {
    expect((await weft('tenant create --id t2 --name two')).code).toBe(0);
    const tok = JSON.parse((await weft('token create --tenant t2 --name ci --json')).out);
    expect(tok.token).toBeTruthy();
    const list = await weft('tenant list --json', { WEFT_TOKEN: tok.token });
    expect(JSON.parse(list.out).map((t: { id: string }) => t.id)).toEqual(['t2']);
    expect((await weft('token list')).out).toMatch(/\s+t2\s+ci\s+/);
    expect((await weft(`token delete ${tok.id}`)).code).toBe(0);
    expect((await weft('tenant list', { WEFT_TOKEN: tok.token })).err).toContain('unknown or revoked token');
  });

  it('mints an admin token with --admin', async () => {
    const tok = JSON.parse((await weft('token create --admin --name ops --json')).out);
    expect(tok.tenantId).toBeNull();
    expect((await weft('chassis list', { WEFT_TOKEN: tok.token })).code).toBe(0);
  });

  it('follows every page on list', async () => {
    expect((await weft('network create --id n3 --tenant t1 --name many')).code).toBe(0);
    for (let i = 0; i < 12; i++) expect((await weft(`endpoint create --id m${i} --network n3`)).code).toBe(0);
    const one = JSON.parse((await weft('endpoint list --network n3 --limit 5 --json')).out);
    expect(one).toHaveLength(5);
    const all = JSON.parse((await weft('endpoint list --network n3 --json')).out);
    expect(all).toHaveLength(12);
  });
});

describe('parseRule', () => {
  it('reads direction, ethertype, protocol, ports and a remote', () => {
    expect(parseRule('egress,ipv6,udp,53,group=dns')).toEqual({
      direction: 'egress',
      ethertype: 'ipv6',
      protocol: 'udp',
      portMin: 53,
      portMax: 53,
      remoteGroupId: 'dns',
    });
    expect(() => parseRule('ingress')).toThrow(/expected DIRECTION,ETHERTYPE,PROTOCOL/);
    expect(() => parseRule('ingress,ipv4,tcp,http')).toThrow(/'http' is not a port/);
  });

  it('reads an ICMP type, and a code after a slash', () => {
    expect(parseRule('ingress,ipv4,icmp,type=8')).toEqual({
      direction: 'ingress',
      ethertype: 'ipv4',
      protocol: 'icmp',
      icmpType: 8,
    });
    expect(parseRule('ingress,ipv4,icmp,type=3/4,remote=10.0.0.0/8')).toMatchObject({
      icmpType: 3,
      icmpCode: 4,
      remoteCidr: '10.0.0.0/8',
    });
    expect(() => parseRule('ingress,ipv4,icmp,type=echo')).toThrow(
      "--rule: 'type=echo' is not an ICMP type like type=8 or type=3/4 (type/code)",
    );
    expect(() => parseRule('ingress,ipv4,icmp,type=3/')).toThrow(/is not an ICMP type/);
  });
});
