import type { Logger } from 'pino';
import type { ChassisInfo } from '../../southbound/ovsdb/chassis/agent.js';
import type { ChassisDesired } from '../../southbound/ovsdb/chassis/desired.js';
import type { ChassisManager } from '../../southbound/ovsdb/chassis/manager.js';
import type { Chassis, Endpoint } from '../intent/model.js';
import type { IntentService } from '../intent/service.js';

/**
 * Joins what a hypervisor says about itself (OVSDB) with what the intent says about it:
 * - a chassis that connects and is not in the intent yet is registered there (name, tunnel IP
 *   from external_ids:weft-encap-ip, the default datapath type), so joining takes only
 *   `ovs-vsctl set-manager`; an operator can pre-provision or edit it through the API;
 * - the intent's settings for a chassis (tunnel IP, bridge, datapath type, offload profile and,
 *   for asap2, the VNIs it needs fixed-key ports for) are handed to the chassis manager, which
 *   makes the hypervisor's database match.
 */
export class ChassisSync {
  constructor(
    private readonly intents: IntentService,
    private readonly manager: ChassisManager,
    private readonly defaults: { datapathType: 'system' | 'netdev' },
    private readonly log: Logger,
  ) {
    manager.on('chassis', (info) => {
      void this.register(info);
    });
    intents.onChange((ev) => {
      // Chassis settings change only with a chassis. Endpoints and networks matter only to the
      // per-VNI tunnel ports of asap2 chassis: a network change to every asap2 chassis, an
      // endpoint change to the asap2 chassis its port is bound on (not to 1,000 of them).
      if (ev.changes.some((c) => c.kind === 'chassis')) return this.provisionAll();
      if (ev.changes.some((c) => c.kind === 'network' || c.kind === 'router' || c.kind === 'mirror'))
        return this.provisionAll('asap2');
      const on = new Set<string>();
      for (const c of ev.changes) {
        if (c.kind !== 'endpoint') continue;
        for (const ep of [c.before, c.after] as Array<Endpoint | undefined>) {
          const sys = ep && this.manager.chassisOfIface(ep.ifaceId);
          if (sys) on.add(sys);
        }
      }
      for (const sys of on) if (this.known(sys)?.offload === 'asap2') void this.provision(sys);
    });
    // A port bound or unbound on an asap2 chassis can add or drop a network there; and where the
    // other end of one of its mirrors is bound, whether that chassis needs the mirror's port.
    manager.on('binding', (e: { systemId: string; event?: { binding: { ifaceId: string } } }) => {
      const on = new Set([e.systemId]);
      const ep = e.event && this.intents.endpointOfIface(e.event.binding.ifaceId);
      for (const peer of ep ? this.mirrorPeers(ep.id) : []) {
        const sys = this.manager.chassisOfIface(peer.ifaceId);
        if (sys) on.add(sys);
      }
      for (const sys of on) if (this.known(sys)?.offload === 'asap2') void this.provision(sys);
    });
  }

  private known(id: string): Chassis | undefined {
    return this.intents.find('chassis', id);
  }

  async register(info: ChassisInfo): Promise<void> {
    if (!this.known(info.systemId)) {
      if (!info.encapIp) {
        this.log.warn(
          { chassis: info.systemId },
          'chassis has no external_ids:weft-encap-ip; set it there or create the chassis through the API',
        );
        return;
      }
      try {
        await this.intents.put(
          'chassis',
          info.systemId,
          {
            name: info.hostname ?? info.systemId,
            tunnelIp: info.encapIp,
            datapathType: this.defaults.datapathType,
            ...(info.underlayMtu ? { underlayMtu: info.underlayMtu } : {}),
          },
          // The hypervisor registered itself (set-manager with external_ids:weft-encap-ip).
          { actor: 'ovsdb', requestId: `chassis ${info.systemId}` },
        );
        this.log.info({ chassis: info.systemId, tunnelIp: info.encapIp }, 'chassis registered');
      } catch (err) {
        this.log.warn({ chassis: info.systemId, err: (err as Error).message }, 'chassis registration failed');
        return;
      }
    }
    await this.provision(info.systemId);
  }

  private provisionAll(onlyProfile?: Chassis['offload']): void {
    for (const info of this.manager.chassis()) {
      if (onlyProfile && this.known(info.systemId)?.offload !== onlyProfile) continue;
      void this.provision(info.systemId);
    }
  }

  private async provision(systemId: string): Promise<void> {
    const c = this.known(systemId);
    if (!c) return;
    const settings: Partial<ChassisDesired> = {
      bridge: c.bridge,
      datapathType: c.datapathType,
      encapIp: c.tunnelIp,
      profile: c.offload,
      underlayMtu: c.underlayMtu,
    };
    if (c.offload === 'asap2') settings.vnis = this.vnisOn(systemId);
    try {
      await this.manager.provision(systemId, settings);
    } catch (err) {
      this.log.warn({ chassis: systemId, err: (err as Error).message }, 'chassis provisioning failed');
    }
  }

  /**
   * VNIs of networks with an endpoint bound on the chassis, and of the networks their routers
   * join (the chassis routes into those: its packets enter the tunnel with their VNI), and of the
   * enabled mirrors with one end bound there and the other on another chassis (copies leave or
   * arrive with the mirror's VNI; a local or half-bound mirror needs no port), asap2: one
   * fixed-key port each.
   */
  private vnisOn(systemId: string): number[] {
    const agent = this.manager.agentOf(systemId);
    const networks = new Set<string>();
    const vnis = new Set<number>();
    for (const ifaceId of agent?.currentBindings.keys() ?? []) {
      const ep = this.intents.endpointOfIface(ifaceId);
      if (!ep) continue;
      for (const id of this.intents.referrerIds('endpoint', ep.id, 'mirror')) {
        const m = this.intents.find('mirror', id);
        if (!m?.enabled) continue;
        const other = this.intents.find('endpoint', m.source === ep.id ? m.destination : m.source);
        const there = other && this.manager.chassisOfIface(other.ifaceId);
        if (there && there !== systemId) vnis.add(m.vni);
      }
      if (networks.has(ep.networkId)) continue;
      networks.add(ep.networkId);
      for (const i of this.intents.routerOnNetwork(ep.networkId)?.router.interfaces ?? [])
        networks.add(i.networkId);
    }
    for (const id of networks) {
      try {
        vnis.add(this.intents.get('network', id).vni);
      } catch {
        // network deleted meanwhile
      }
    }
    return [...vnis].sort((a, b) => a - b);
  }

  /** The endpoints at the other end of an endpoint's mirrors. */
  private mirrorPeers(endpointId: string): Endpoint[] {
    const out: Endpoint[] = [];
    for (const id of this.intents.referrerIds('endpoint', endpointId, 'mirror')) {
      const m = this.intents.find('mirror', id);
      const other = m && this.intents.find('endpoint', m.source === endpointId ? m.destination : m.source);
      if (other) out.push(other);
    }
    return out;
  }
}
