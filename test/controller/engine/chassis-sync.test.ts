import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChassisSync } from '../../../controller/engine/chassis-sync.js';
import type { ChassisDesired } from '../../../southbound/ovsdb/chassis/desired.js';
import type { ChassisManager } from '../../../southbound/ovsdb/chassis/manager.js';
import { openService } from '../intent/helpers.js';

const log = pino({ level: 'silent' });

/** The chassis manager as ChassisSync uses it: connected chassis, their bound ports, provisioning. */
class FakeManager extends EventEmitter {
  readonly bound = new Map<string, Map<string, unknown>>();
  readonly provisioned: Array<{ systemId: string; settings: Partial<ChassisDesired> }> = [];
  chassis() {
    return [...this.bound.keys()].map((systemId) => ({ systemId }));
  }
  agentOf(systemId: string) {
    const b = this.bound.get(systemId);
    return b && { currentBindings: b };
  }
  chassisOfIface(ifaceId: string) {
    return [...this.bound].find(([, b]) => b.has(ifaceId))?.[0];
  }
  async provision(systemId: string, settings: Partial<ChassisDesired>) {
    this.provisioned.push({ systemId, settings });
  }
  /** A VM port shows up on a chassis (OVSDB), as the manager reports it. */
  bind(systemId: string, ifaceId: string) {
    this.bound.get(systemId)!.set(ifaceId, {});
    this.emit('binding', { systemId, event: { kind: 'bind', binding: { ifaceId } } });
  }
}

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('ChassisSync: fixed-key VXLAN ports of asap2 chassis', () => {
  let h: Awaited<ReturnType<typeof openService>>;
  let m: FakeManager;
  beforeEach(async () => {
    h = await openService();
    m = new FakeManager();
    new ChassisSync(h.svc, m as unknown as ChassisManager, { datapathType: 'netdev' }, log);
    await h.svc.put('tenant', 't1', { name: 't1' });
    for (const [i, offload] of (['asap2', 'asap2', 'none'] as const).entries()) {
      m.bound.set(`hv${i}`, new Map());
      await h.svc.put('chassis', `hv${i}`, { name: `hv${i}`, tunnelIp: `192.168.70.${i + 1}`, offload });
    }
    await h.svc.put('network', 'n1', { tenantId: 't1', name: 'n1', vni: 4001, subnets: ['10.1.0.0/24'] });
    await h.svc.put('network', 'n2', { tenantId: 't1', name: 'n2', vni: 4002, subnets: ['10.2.0.0/24'] });
    await tick();
    m.provisioned.length = 0;
  });
  afterEach(() => h.close());

  const vnisOf = (systemId: string) =>
    m.provisioned.filter((p) => p.systemId === systemId).at(-1)?.settings.vnis;

  it('gives an asap2 chassis a port per network it hosts, as endpoints bind and go', async () => {
    await h.svc.put('endpoint', 'a', { networkId: 'n1', ips: ['10.1.0.5'], ifaceId: 'iface-a' });
    await tick();
    expect(m.provisioned).toEqual([]); // not bound anywhere yet: no chassis to configure
    m.bind('hv0', 'iface-a');
    await tick();
    expect(vnisOf('hv0')).toEqual([4001]);
    m.bound.get('hv0')!.set('iface-b', {});
    await h.svc.put('endpoint', 'b', { networkId: 'n2', ips: ['10.2.0.5'], ifaceId: 'iface-b' });
    await tick();
    expect(vnisOf('hv0')).toEqual([4001, 4002]);
    await h.svc.delete('endpoint', 'a');
    await tick();
    expect(vnisOf('hv0')).toEqual([4002]);
    // Only the chassis the endpoints are on, never the other asap2 chassis or a plain one.
    expect(new Set(m.provisioned.map((p) => p.systemId))).toEqual(new Set(['hv0']));
  });

  it("gives both ends of a mirror across two asap2 chassis the mirror VNI's port, and only then", async () => {
    await h.svc.put('endpoint', 'src', { networkId: 'n1', ips: ['10.1.0.7'], ifaceId: 'iface-src' });
    await h.svc.put('endpoint', 'cap', { networkId: 'n2', ips: ['10.2.0.7'], ifaceId: 'iface-cap' });
    await h.svc.put('mirror', 'm1', { source: 'src', destination: 'cap', vni: 7000 });
    m.bind('hv0', 'iface-src');
    await tick();
    expect(vnisOf('hv0')).toEqual([4001]); // the capture VM is bound nowhere: no copy leaves
    // The capture VM binds on hv1: hv1 gets the port, and so does hv0 (provisioned again by it).
    m.bind('hv1', 'iface-cap');
    await tick();
    expect(vnisOf('hv1')).toEqual([4002, 7000]);
    expect(vnisOf('hv0')).toEqual([4001, 7000]);
    // Disabled: no port on either.
    await h.svc.update('mirror', 'm1', { enabled: false });
    await tick();
    expect([vnisOf('hv0'), vnisOf('hv1')]).toEqual([[4001], [4002]]);
    // Both ends on one chassis: copies are an output there, no tunnel, no port.
    await h.svc.update('mirror', 'm1', { enabled: true });
    m.bound.get('hv1')!.delete('iface-cap');
    m.bind('hv0', 'iface-cap');
    await tick();
    expect(vnisOf('hv0')).toEqual([4001, 4002]);
  });

  it('leaves chassis without the asap2 profile alone on endpoint writes and bindings', async () => {
    m.bind('hv2', 'iface-c');
    await h.svc.put('endpoint', 'c', { networkId: 'n1', ips: ['10.1.0.6'], ifaceId: 'iface-c' });
    await tick();
    expect(m.provisioned).toEqual([]);
  });

  it('reconfigures every asap2 chassis on a network change, and every chassis on a chassis change', async () => {
    await h.svc.update('network', 'n1', { name: 'renamed' });
    await tick();
    expect(new Set(m.provisioned.map((p) => p.systemId))).toEqual(new Set(['hv0', 'hv1']));
    m.provisioned.length = 0;
    await h.svc.update('chassis', 'hv2', { underlayMtu: 9000 });
    await tick();
    expect(new Set(m.provisioned.map((p) => p.systemId))).toEqual(new Set(['hv0', 'hv1', 'hv2']));
    expect(m.provisioned.find((p) => p.systemId === 'hv2')?.settings.underlayMtu).toBe(9000);
  });
});
