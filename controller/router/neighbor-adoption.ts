import type { Logger } from 'pino';
import { ofpg, ofpp, ofptt } from '../../southbound/openflow/codec/constants.js';
import type { MultipartRequestBody } from '../../southbound/openflow/codec/multipart-types.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import { LEARNED_COOKIE_TAG } from '../pipeline/cookies.js';
import { type LearnedOnSwitch, readLearnedFlows } from './neighbor-flows.js';
import type { NeighborPlace, NeighborResolver } from './neighbor-resolver.js';
import type { NeighborContext } from './neighbor-service.js';
import { learnedHardTimeoutSeconds } from './neighbor-timings.js';

/** The FLOW stats request for every learned flow of a switch (cookie tag 0x4c). */
const LEARNED_FLOWS: MultipartRequestBody = {
  kind: 'FLOW',
  tableId: ofptt.ALL,
  outPort: ofpp.ANY,
  outGroup: ofpg.ANY,
  match: [],
  cookie: LEARNED_COOKIE_TAG << 56n,
  cookieMask: 0xffn << 56n,
};

/**
 * A leader's first look at each switch: the learned flows it already holds, put back into the
 * neighbour table (NeighborResolver.adopt) so a restarted controller or a new HA leader refreshes
 * them instead of letting them expire under traffic.
 */
export class NeighborAdoption {
  /** Switches whose learned flows this leader has read (or is reading). */
  readonly #read = new Set<string>();
  #adopting = false;
  /** Neighbours read back from holders whose place's switch has not been read yet. */
  readonly #orphans = new Map<
    string,
    {
      networkId: string;
      ip: string;
      mac: string;
      holders: Set<string>;
      place?: NeighborPlace;
      readAt: number;
    }
  >();

  /**
   * Operator flushes (NeighborService.flush): for as long as flows learned before one may still be
   * on a switch (their hard timeout), what they cover is never adopted back from one, whether its
   * read was under way, its switch not read yet, or disconnected at the flush.
   */
  readonly #flushes: Array<{ covers: (networkId: string, ip: string) => boolean; at: number }> = [];

  constructor(
    private readonly switches: SwitchRegistry,
    private readonly ctx: NeighborContext,
    private readonly resolver: NeighborResolver,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /** Leadership lost: the next leadership reads every switch again. */
  reset(): void {
    this.#read.clear();
    this.#orphans.clear();
  }

  /**
   * An operator flushed what `covers` names: its orphans are dropped (their keys returned, to delete
   * their flows) and no read adopts it again while flows from before may remain.
   */
  flushed(covers: (networkId: string, ip: string) => boolean): Array<{ networkId: string; ip: string }> {
    this.#flushes.push({ covers, at: this.now() });
    const out: Array<{ networkId: string; ip: string }> = [];
    for (const [key, o] of this.#orphans) {
      if (!covers(o.networkId, o.ip)) continue;
      this.#orphans.delete(key);
      out.push({ networkId: o.networkId, ip: o.ip });
    }
    return out;
  }

  /** A switch went away: read it again when it comes back (a restarted ovs-vswitchd holds nothing). */
  forget(dpid: string): void {
    this.#read.delete(dpid);
  }

  /**
   * Reads the learned flows of every switch this leader has not read yet and adopts them
   * (NeighborResolver.adopt): after a restart or a failover the table starts from what the
   * switches hold, so their flows are refreshed rather than left to expire under traffic. A
   * neighbour is adopted once the switch it sits behind has been read (its place).
   */
  readNewSwitches(): void {
    if (this.#adopting) return;
    const fresh = this.switches
      .list()
      .flatMap((sw) =>
        sw.dpid && sw.state === 'up' && !this.#read.has(sw.dpid) && this.ctx.chassisOfDatapath(sw.dpid)
          ? [{ sw, dpid: sw.dpid }]
          : [],
      );
    if (fresh.length === 0) {
      // A VIP's holder may be bound only once its chassis's facts arrive, after the switch holding
      // its flows was read: try again each tick while they can still be refreshed in time.
      if (this.#orphans.size > 0) this.#adoptOrphans();
      return;
    }
    this.#adopting = true;
    for (const f of fresh) this.#read.add(f.dpid);
    const read = fresh.map(({ sw, dpid }) =>
      sw.multipart(LEARNED_FLOWS, 3000).then(
        (replies) => ({ dpid, flows: replies.flatMap((b) => (b.kind === 'FLOW' ? b.flows : [])) }),
        (err: unknown) => {
          this.#read.delete(dpid);
          this.log.warn({ dpid, err }, 'learned flows not read; trying again');
          return undefined;
        },
      ),
    );
    void Promise.all(read)
      .then((results) => {
        if (!this.ctx.isLeader()) return;
        for (const r of results) if (r) this.#readBack(r.dpid, readLearnedFlows(r.flows));
        this.#adoptOrphans();
      })
      .finally(() => {
        this.#adopting = false;
      });
  }

  /** One switch's learned flows: who holds which neighbour, and where each sits. */
  #readBack(dpid: string, learned: readonly LearnedOnSwitch[]): void {
    const chassisId = this.ctx.chassisOfDatapath(dpid);
    const hardTimeoutMs = learnedHardTimeoutSeconds(this.resolver.timings) * 1000;
    const since = this.now() - hardTimeoutMs;
    while (this.#flushes.length > 0 && this.#flushes[0]!.at < since) this.#flushes.shift();
    for (const l of learned) {
      const net = this.ctx.networkByVni(l.vni);
      if (!net || !chassisId) continue;
      if (this.#flushes.some((f) => f.covers(net.id, l.ip))) continue;
      const key = `${net.id}|${l.ip}`;
      const o = this.#orphans.get(key) ?? {
        networkId: net.id,
        ip: l.ip,
        mac: l.mac,
        holders: new Set<string>(),
        readAt: this.now(),
      };
      o.holders.add(dpid);
      // Its place only while that port still carries that VLAN for the network: a flow left from
      // a binding since deleted (or given to another network) adopts nothing, and expires.
      const binding =
        l.local &&
        this.ctx
          .vlanPorts(net.id)
          .find((p) => p.chassisId === chassisId && p.ofport === l.local!.ofport && p.vlan === l.local!.vlan);
      const gatewayMac = this.ctx.routerInterface(net.id)?.mac.toLowerCase();
      if (l.local && binding && l.mac === o.mac) {
        o.place = {
          dpid,
          chassisId,
          bindingId: binding.bindingId,
          ofport: l.local.ofport,
          vlan: l.local.vlan,
          vni: l.vni,
          ...(gatewayMac ? { gatewayMac } : {}),
        };
      }
      this.#orphans.set(key, o);
    }
  }

  #adoptOrphans(): void {
    const now = this.now();
    const hardTimeoutMs = learnedHardTimeoutSeconds(this.resolver.timings) * 1000;
    for (const [key, o] of this.#orphans) {
      o.place ??= this.#vipPlace(o);
      if (!o.place) {
        // Its flows have expired by now: nothing left to adopt.
        if (now - o.readAt > hardTimeoutMs) this.#orphans.delete(key);
        continue;
      }
      this.resolver.adopt({ networkId: o.networkId, ip: o.ip }, o.mac, o.place, [...o.holders], now);
      this.log.info(
        { network: o.networkId, ip: o.ip, mac: o.mac, chassis: o.place.chassisId, holders: o.holders.size },
        'neighbour adopted from the switches',
      );
      this.#orphans.delete(key);
    }
  }

  /**
   * A VIP's flows carry no place (no l2 flow of theirs leads anywhere): its holder is the endpoint
   * allowed it whose MAC they name, where that endpoint is bound now.
   */
  #vipPlace(o: { networkId: string; ip: string; mac: string }): NeighborPlace | undefined {
    const h = this.ctx.vipHolders(o.networkId, o.ip).find((x) => x.mac === o.mac);
    const dpid = h && this.ctx.datapathOfChassis(h.chassisId);
    const net = this.ctx.network(o.networkId);
    const gatewayMac = this.ctx.routerInterface(o.networkId)?.mac.toLowerCase();
    if (!h || !dpid || !net) return undefined;
    return {
      dpid,
      chassisId: h.chassisId,
      bindingId: '',
      endpointId: h.endpointId,
      ofport: h.ofport,
      vlan: 0,
      vni: net.vni,
      ...(gatewayMac ? { gatewayMac } : {}),
    };
  }
}
