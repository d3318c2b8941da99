import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { RouterCreate, RouterPortForwardInput } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest, seedExternal } from './router-fixture.js';

/**
 * Port forwards kept valid by later writes: a router write that keeps `snat` as stored is refused
 * naming the field it changed; a network's new subnets must keep the internal addresses on it.
 * Red's web 10.0.0.0/24, db 10.0.1.0/24 (internal), ext 10.3.0.0/24 (external); r1 on all three,
 * SNAT on 10.3.0.1 forwarding tcp/8080 to 10.0.1.79:80 (db) and udp/53 to 10.0.0.5 (web).
 */

let svc: IntentService;
redBlueEachTest((s) => {
  svc = s;
}, seedExternal);

const interfaces = [
  { networkId: 'web', ip: '10.0.0.1' },
  { networkId: 'db', ip: '10.0.1.1' },
  { networkId: 'ext', ip: '10.3.0.1' },
];
const forwards: RouterPortForwardInput[] = [
  { protocol: 'tcp', port: 8080, internalIp: '10.0.1.79', internalPort: 80 },
  { protocol: 'udp', port: 53, internalIp: '10.0.0.5' },
];
const snat = { ip: '10.3.0.1', portForwards: forwards };
const seed = (more: Partial<RouterCreate> = {}) =>
  svc.put('router', 'r1', { tenantId: 'red', name: 'r1', interfaces, snat, ...more });
/** The stored router (with its revision), to show a refused write changed nothing. */
const snapshot = () => structuredClone(svc.find('router', 'r1'));

describe('port forwards: a router write keeping snat names the field it changed', () => {
  it('refuses detaching the internal network holding an internalIp, naming interfaces', async () => {
    await seed();
    const before = snapshot();
    const e = await rejects(
      svc.update('router', 'r1', { interfaces: [interfaces[0]!, interfaces[2]!] }),
      'invalid',
      /^interfaces: network 'db' holds 10\.0\.1\.79, the internal address of snat\.portForwards\[0\] \(tcp\/8080 -> 10\.0\.1\.79:80\); keep its interface or change snat in the same write$/,
    );
    expect(e.field).toBe('interfaces');
    expect(svc.get('router', 'r1')).toEqual(before);
    // The same snat re-sent (internalPort left to default, as stored) is still "kept".
    const resent = await rejects(
      svc.update('router', 'r1', {
        interfaces: [interfaces[0]!, interfaces[2]!],
        snat: { ip: '10.3.0.1', portForwards: [forwards[0]!, { ...forwards[1]!, internalPort: 53 }] },
      }),
      'invalid',
      /^interfaces: network 'db' holds 10\.0\.1\.79/,
    );
    expect(resent.field).toBe('interfaces');
    // Changing snat in the same write: the port forward is named instead...
    const changed = await rejects(
      svc.update('router', 'r1', {
        interfaces: [interfaces[0]!, interfaces[2]!],
        snat: { ip: '10.3.0.1', portForwards: [{ ...forwards[0]!, port: 8081 }] },
      }),
      'invalid',
      /^snat\.portForwards\[0\]\.internalIp: 10\.0\.1\.79 is outside the IPv4 subnets of the router's internal networks \(10\.0\.0\.0\/24\)/,
    );
    expect(changed.field).toBe('snat.portForwards[0].internalIp');
    expect(svc.get('router', 'r1')).toEqual(before);
    // ...and dropping it there lets the network go.
    const { object } = await svc.update('router', 'r1', {
      interfaces: [interfaces[0]!, interfaces[2]!],
      snat: { ip: '10.3.0.1', portForwards: [forwards[1]!] },
    });
    expect(object.interfaces.map((x) => x.networkId)).toEqual(['web', 'ext']);
    expect(object.snat?.portForwards).toStrictEqual([
      { protocol: 'udp', port: 53, internalIp: '10.0.0.5', internalPort: 53 },
    ]);
  });

  it("refuses moving the router's own address onto an internalIp, naming interfaces[i].ip", async () => {
    await seed();
    const before = snapshot();
    const moved = [interfaces[0]!, { networkId: 'db', ip: '10.0.1.79' }, interfaces[2]!];
    const e = await rejects(
      svc.update('router', 'r1', { interfaces: moved }),
      'invalid',
      /^interfaces\[1\]\.ip: 10\.0\.1\.79 is the internal address of snat\.portForwards\[0\] \(tcp\/8080 -> 10\.0\.1\.79:80\), a host behind this router; pick another address for the router on network 'db' or change snat in the same write$/,
    );
    expect(e.field).toBe('interfaces[1].ip');
    expect(svc.get('router', 'r1')).toEqual(before);
    // Changing snat too: the port forward is named, as before.
    const both = await rejects(
      svc.update('router', 'r1', {
        interfaces: moved,
        snat: { ip: '10.3.0.1', portForwards: [forwards[0]!] },
      }),
      'invalid',
      /^snat\.portForwards\[0\]\.internalIp: 10\.0\.1\.79 is this router's own address on network 'db'/,
    );
    expect(both.field).toBe('snat.portForwards[0].internalIp');
  });

  it('refuses a floating IP for an internalIp, naming floatingIps[i].fixedIp (or .ip)', async () => {
    await seed();
    const before = snapshot();
    const e = await rejects(
      svc.update('router', 'r1', {
        floatingIps: [
          { ip: '10.3.0.60', fixedIp: '10.0.0.9' },
          { ip: '10.3.0.50', fixedIp: '10.0.0.5' },
        ],
      }),
      'invalid',
      /^floatingIps\[1\]\.fixedIp: 10\.0\.0\.5 is the internal address of snat\.portForwards\[1\] \(udp\/53 -> 10\.0\.0\.5:53\); a host reached by a port forward has no floating IP: change snat in the same write or pick another fixed address$/,
    );
    expect(e.field).toBe('floatingIps[1].fixedIp');
    // A floating IP on db (an internal network for SNAT) that is an internal address.
    const ip = await rejects(
      svc.update('router', 'r1', { floatingIps: [{ ip: '10.0.1.79', fixedIp: '10.0.0.9' }] }),
      'invalid',
      /^floatingIps\[0\]\.ip: 10\.0\.1\.79 is the internal address of snat\.portForwards\[0\] \(tcp\/8080 -> 10\.0\.1\.79:80\), a host behind this router; pick another floating IP or change snat in the same write$/,
    );
    expect(ip.field).toBe('floatingIps[0].ip');
    expect(svc.get('router', 'r1')).toEqual(before);
    // Another fixed address is fine next to the port forwards.
    const ok = await svc.update('router', 'r1', { floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.9' }] });
    expect(ok.object.snat?.portForwards).toHaveLength(2);
  });

  it('names the port forward when snat changes in the same write as the floating IP', async () => {
    await seed();
    const e = await rejects(
      svc.update('router', 'r1', {
        floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }],
        snat: { ip: '10.3.0.200', portForwards: forwards },
      }),
      'invalid',
      /^snat\.portForwards\[1\]\.internalIp: 10\.0\.0\.5 is the fixed address of floatingIps\[0\]/,
    );
    expect(e.field).toBe('snat.portForwards[1].internalIp');
  });
});

describe('port forwards: network subnet changes', () => {
  it('refuses new subnets leaving an internalIp outside or unusable, naming the router and the port forward', async () => {
    await seed();
    const db = svc.get('network', 'db');
    const e = await rejects(
      svc.update('network', 'db', { subnets: ['10.0.1.0/26'] }),
      'invalid',
      /^subnets: 10\.0\.1\.79, the internal address of snat\.portForwards\[0\] \(tcp\/8080 -> 10\.0\.1\.79:80\) of router 'r1', would be outside the IPv4 subnets \(10\.0\.1\.0\/26\); change the router's snat first$/,
    );
    expect(e.field).toBe('subnets');
    await rejects(
      svc.update('network', 'db', { subnets: ['10.0.1.0/26', '10.0.1.76/30'] }),
      'invalid',
      /^subnets: 10\.0\.1\.79, the internal address of snat\.portForwards\[0\] .* would be the broadcast address of 10\.0\.1\.76\/30; change the router's snat first$/,
    );
    // PUT as well as PATCH.
    await rejects(
      svc.put('network', 'db', { tenantId: 'red', name: 'db', vni: 4098, subnets: ['10.0.1.0/26'] }),
      'invalid',
      /^subnets: 10\.0\.1\.79, the internal address of snat\.portForwards\[0\]/,
    );
    expect(svc.get('network', 'db')).toEqual(db);
    // Keeping the address usable is fine; another network is not held to it.
    const wider = await svc.update('network', 'db', { subnets: ['10.0.1.0/25', '10.9.0.0/24'] });
    expect(wider.object.subnets).toEqual(['10.0.1.0/25', '10.9.0.0/24']);
    const app = await svc.update('network', 'app', { subnets: ['10.0.2.0/25'] });
    expect(app.object.subnets).toEqual(['10.0.2.0/25']);
    // Once the port forward goes, so does the constraint.
    await svc.update('router', 'r1', { snat: { ip: '10.3.0.1', portForwards: [forwards[1]!] } });
    expect((await svc.update('network', 'db', { subnets: ['10.0.1.0/26'] })).object.subnets).toEqual([
      '10.0.1.0/26',
    ]);
  });

  it("still refuses the external network's change that leaves the SNAT address outside", async () => {
    await seed({ snat: { ip: '10.3.0.200', portForwards: forwards } });
    await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/25'] }),
      'invalid',
      /^subnets: 10\.3\.0\.200, the SNAT address of router 'r1', would be outside the IPv4 subnets \(10\.3\.0\.0\/25\); change the router's snat first$/,
    );
  });

  it('refuses a batch writing the router and then shrinking the network; nothing is written', async () => {
    const router: BatchOp = {
      op: 'replace',
      kind: 'router',
      id: 'r1',
      body: { tenantId: 'red', interfaces, snat },
    };
    const e = await rejects(
      svc.batch([
        router,
        {
          op: 'replace',
          kind: 'network',
          id: 'db',
          body: { tenantId: 'red', name: 'db', vni: 4098, subnets: ['10.0.1.0/26'] },
        },
      ]),
      'invalid',
      /^ops\[1\] \(network 'db'\): subnets: 10\.0\.1\.79, the internal address of snat\.portForwards\[0\]/,
    );
    expect(e.field).toBe('ops[1].body.subnets');
    expect(svc.find('router', 'r1')).toBeUndefined();
    expect(svc.get('network', 'db').subnets).toEqual(['10.0.1.0/24']);
  });
});
