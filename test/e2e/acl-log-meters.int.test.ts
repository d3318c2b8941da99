import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclLogMeterId } from '../../controller/pipeline/meters.js';
import type { SgLogEntry } from '../../controller/sg-log/sg-log-book.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e } from './harness.js';
import { createRedBlue, RED_BLUE_VMS } from './red-blue.js';

/**
 * Network ACL logging stays per tenant under load, with real OVS and real packets: red floods a
 * logging ACL of its own (UDP, thousands a second) while every datagram blue's ACL drops meanwhile
 * is still logged, because each network's copies go through a meter of that network's (100 a
 * second, burst 200) and not one meter every network of a hypervisor shares.
 */
let e: E2e;
const FLOOD = { pps: 2000, seconds: 3 };
const TRICKLE = { pps: 10, seconds: 1.5 };
const [RED_VNI, BLUE_VNI] = [100, 200];

type Page = { entries: SgLogEntry[] };
const logOf = async (query: string) =>
  ((await e.api.get(`/v1/security-group-log?limit=1000&${query}`)) as Page).entries;

/** What a meter's band dropped on one hypervisor (`ovs-ofctl meter-stats`); the meter must exist. */
async function meterDropped(hv: string, meterId: number): Promise<number> {
  const sw = e.lab.hv(hv);
  const stats = await sw.ofctl('-O', 'OpenFlow13', 'meter-stats', sw.mgmt('br-int'));
  const at = stats.indexOf(`meter:${meterId} `);
  expect(at, `meter ${meterId} on ${hv}:\n${stats}`).toBeGreaterThanOrEqual(0);
  const band = /0: packet_count:(\d+)/.exec(stats.slice(at))?.[1];
  expect(band, stats).toBeDefined();
  return Number(band);
}

const droppedEverywhere = async (meterId: number) =>
  (await meterDropped('hv1', meterId)) + (await meterDropped('hv2', meterId));

beforeAll(async () => {
  e = await startE2e(2, RED_BLUE_VMS);
  await createRedBlue(e.api);
  const acl = (id: string, tenant: string, protocol: string, port: number) =>
    e.api.post('/v1/acls?wait=applied&timeout=20s', {
      id,
      networkId: `${tenant}-net`,
      priority: 10,
      direction: 'ingress',
      action: 'drop',
      protocol,
      portMin: port,
      portMax: port,
      log: true,
    });
  await acl('red-no-9999', 'red', 'udp', 9999);
  await acl('blue-no-9090', 'blue', 'udp', 9090);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('network ACL log meters per network (real OVS, a real flood)', () => {
  it("one tenant's flood of logged drops does not silence another tenant's log", async () => {
    const since = e.controller.securityLog.last;
    const [redBefore, blueBefore] = [
      await droppedEverywhere(aclLogMeterId(RED_VNI)),
      await droppedEverywhere(aclLogMeterId(BLUE_VNI)),
    ];
    const blueMatched = async () =>
      ((await e.api.get('/v1/acls/blue-no-9090/counters')) as { packets: number }).packets;
    const blueMatchedBefore = await blueMatched();
    const t0 = performance.now();
    const flood = e.lab.udpFlood('r1', '10.0.0.2', 9999, FLOOD);
    // Blue's datagrams start once red's burst allowance is spent, and end while red still floods.
    await new Promise((r) => setTimeout(r, 600));
    const blueSent = await e.lab.udpFlood('b1', '10.0.0.2', 9090, TRICKLE);
    const sent = await flood;
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 500));

    const blue = await logOf(`since=${since}&endpoint=b2&verdict=denied`);
    // Every one the ACL dropped (its flow's counter on the switch): blue's meter (100 a second) is
    // far from full; a meter red shared would be (6-8 of 15 logged when it was tried).
    const matched = (await blueMatched()) - blueMatchedBefore;
    expect(matched, `of ${blueSent} sent`).toBeGreaterThan(blueSent / 2);
    expect(blue.length, 'blue datagrams logged during the flood').toBe(matched);
    for (const x of blue)
      expect(x).toMatchObject({
        tenantId: 'blue',
        networkAclId: 'blue-no-9090',
        protocol: 'udp',
        dstPort: 9090,
      });

    const red = await logOf(`since=${since}&endpoint=r2&verdict=denied`);
    expect(red.length).toBeGreaterThan(0);
    expect(red.every((x) => x.tenantId === 'red' && x.networkAclId === 'red-no-9999')).toBe(true);
    // Red's meter: at most the burst and 100 a second on each hypervisor, the rest dropped on the
    // switch, never reaching the controller; blue's meter dropped nothing.
    expect(red.length, `${red.length} of ${sent} logged in ${seconds.toFixed(1)} s`).toBeLessThanOrEqual(
      2 * (200 + Math.ceil(100 * (seconds + 0.5))),
    );
    const redDropped = (await droppedEverywhere(aclLogMeterId(RED_VNI))) - redBefore;
    expect(redDropped, `red's meter dropped ${redDropped} of ${sent}`).toBeGreaterThan(sent / 4);
    expect((await droppedEverywhere(aclLogMeterId(BLUE_VNI))) - blueBefore).toBe(0);
  }, 60_000);

  it("each network's logging ACL uses its own meter, and the switches hold exactly the desired state", async () => {
    const flows = await e.lab.hv('hv2').ofctl('dump-flows', e.lab.hv('hv2').mgmt('br-int'));
    expect(flows).toContain(`meter_id=${aclLogMeterId(RED_VNI)}`);
    expect(flows).toContain(`meter_id=${aclLogMeterId(BLUE_VNI)}`);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
