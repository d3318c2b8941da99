import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { flowReasons } from '../../../apps/offload/compute.js';
import { appOf } from '../../../controller/pipeline/cookies.js';
import { GROUP_KIND, groupId } from '../../../controller/pipeline/groups.js';
import { formatFlow, formatGroup } from '../../../southbound/openflow/text/index.js';
import { routedTenant } from './fixtures.js';

const flowsOn = (hv: string, withRouter = true) => {
  const { intent, facts } = routedTenant(withRouter);
  return computeDatapath(buildDatapathViews(intent, facts).get(hv)!);
};
const text = (hv: string, withRouter = true) => flowsOn(hv, withRouter).flows.map((f) => formatFlow(f));

describe('routing in the datapath views', () => {
  it('puts a network on every chassis hosting a network of its router, and only there', () => {
    const { intent, facts } = routedTenant();
    const views = buildDatapathViews(intent, facts);
    const nets = (hv: string) => views.get(hv)!.networks.map((n) => n.networkId);
    expect(nets('hv1')).toEqual(['web', 'db', 'blue']);
    expect(nets('hv2')).toEqual(['web', 'db']); // web only because db routes into it
    expect(nets('hv3')).toEqual(['web', 'db']);
    const { intent: plain } = routedTenant(false);
    const alone = buildDatapathViews(plain, facts);
    expect(alone.get('hv2')!.networks.map((n) => n.networkId)).toEqual(['db']);
    expect(alone.get('hv3')!.networks.map((n) => n.networkId)).toEqual(['web']);
  });

  it('floods only to chassis with ports of the network, not to those that merely route into it', () => {
    const { intent, facts } = routedTenant();
    const hv1 = buildDatapathViews(intent, facts).get('hv1')!;
    const db = hv1.networks.find((n) => n.networkId === 'db')!;
    expect(db.remoteChassis.map((c) => c.chassisId)).toEqual(['hv2']);
    expect(db.fromTunnel).toBe(true);
    const flood = computeDatapath(hv1).groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_ALL, 101))!;
    expect(formatGroup(flood)).toContain('set_field:10.0.0.2->tun_dst');
    expect(formatGroup(flood)).not.toContain('10.0.0.3');
    // hv3 holds db without a port of it: only the way to db's endpoints, no flood group, no ARP
    // answers, none of db's own flows (gateway, classifier).
    const hv3 = buildDatapathViews(intent, facts).get('hv3')!;
    const db3 = hv3.networks.find((n) => n.networkId === 'db')!;
    expect(db3).toMatchObject({ local: [], routedOnly: true });
    const onHv3 = computeDatapath(hv3);
    expect(onHv3.groups.map((g) => g.groupId & 0xffffff)).toEqual([100, 100]); // web's two flood groups
    const dbFlows = onHv3.flows.filter((f) =>
      f.match.some((t) => t.field === 'metadata' && t.value === 101n),
    );
    expect(dbFlows.map((f) => f.tableId).sort()).toEqual([36, 36, 40, 40]); // d1 and d2: neighbour + tunnel
  });

  it('hv3 routes web -> db straight into the tunnel towards the db VM', () => {
    const flows = text('hv3');
    expect(flows).toContainEqual(
      expect.stringMatching(
        /table=35, priority=148,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10\.2\.0\.0\/24 actions=dec_ttl,set_field:0a:57:72:00:00:65->eth_src,write_metadata:0x65\/0xffffff,goto_table:36$/,
      ),
    );
    expect(flows).toContainEqual(
      expect.stringMatching(
        /table=36, priority=100,ip,metadata=0x65,nw_dst=10\.2\.0\.6 actions=set_field:02:00:00:00:02:06->eth_dst,goto_table:40$/,
      ),
    );
    expect(flows).toContainEqual(
      expect.stringMatching(
        /table=40, priority=100,metadata=0x65,dl_dst=02:00:00:00:02:06 actions=set_field:10\.0\.0\.2->tun_dst,set_field:0x65->tun_id,output:100$/,
      ),
    );
  });

  it("never routes another tenant's network: blue has no gateway and no l3-neighbor flows", () => {
    const flows = flowsOn('hv1').flows;
    const blue = flows.filter((f) => f.match.some((t) => t.field === 'metadata' && t.value === 200n));
    expect(blue.filter((f) => f.tableId === 35 || f.tableId === 36)).toEqual([]);
    const routed = flows.filter((f) => appOf(f.cookie) === 'router');
    expect(routed.every((f) => !f.match.some((t) => t.field === 'metadata' && t.value === 200n))).toBe(true);
  });

  it('adds only router flows (and the networks routed into) where a router joins the networks', () => {
    for (const hv of ['hv1', 'hv2', 'hv3']) {
      const was = new Set(text(hv, false));
      const now = text(hv);
      // Nothing of what was there changes or goes: a router only adds.
      expect(now.filter((l) => was.has(l)).length).toBeGreaterThan(0);
      expect([...was].filter((l) => !now.includes(l))).toEqual([]);
    }
    // hv1 already hosted web and db: exactly the router's flows are added there.
    const added = text('hv1').filter((l) => !text('hv1', false).includes(l));
    const routerFlows = flowsOn('hv1').flows.filter((f) => appOf(f.cookie) === 'router');
    expect(added).toHaveLength(routerFlows.length);
    // web: ARP + 2 pings + 2 other-traffic-to-the-router + 2 routes + 2 TTL run-outs + no-route +
    // not-IPv4; db the same; l3-neighbor: w1, w3, d1, d2.
    // Each network also drops ARP from and IPv4 sent from its gateway address (no VM speaks as it).
    expect(routerFlows).toHaveLength(13 + 13 + 4);
  });
});

describe('routing under the asap2 offload check', () => {
  it('keeps routes and neighbour flows offloadable; only gateway ARP, pings to the router and what goes up for an ICMP error stay in software', () => {
    const { intent, facts } = routedTenant();
    const desired = computeDatapath(buildDatapathViews(intent, facts).get('hv1')!);
    const routerFlows = desired.flows.filter((f) => appOf(f.cookie) === 'router');
    const software = routerFlows.filter((f) => flowReasons(f, new Map()).length > 0);
    // The 2 gateway ARP answers (ARP rewrites run in software, as for every endpoint) and the 4
    // echo replies (2 router addresses, asked from web and from db: ICMP rewritten in userspace);
    // up to the controller, from web and from db: other traffic to the 2 router addresses, TTL 0
    // and 1, no route.
    const sorted = (l: number[][]) => l.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    expect(sorted(software.map((f) => [f.tableId, f.priority]))).toEqual(
      sorted([
        // The guard against a VM posing as the gateway by ARP (an arp_spa match runs in software).
        ...Array(2).fill([10, 130]),
        ...Array(2).fill([30, 100]),
        ...Array(4).fill([35, 300]),
        ...Array(4).fill([35, 290]),
        ...Array(4).fill([35, 250]),
        ...Array(2).fill([35, 10]),
      ]),
    );
    // IPv4 routes sit at 100 + 2 x prefix length (route4Priority), floating-IP variants one above.
    const routes = routerFlows.filter((f) => f.tableId === 35 && f.priority > 100 && f.priority <= 165);
    const neighbours = routerFlows.filter((f) => f.tableId === 36);
    expect(routes.length).toBeGreaterThan(0);
    expect(neighbours.length).toBeGreaterThan(0);
    for (const f of [...routes, ...neighbours]) expect(flowReasons(f, new Map())).toEqual([]);
  });
});
