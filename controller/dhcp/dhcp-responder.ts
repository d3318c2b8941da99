import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { ChassisFacts } from '../../apps/build-view.js';
import { OFP_NO_BUFFER, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { PacketIn, PacketOut } from '../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { Endpoint, Network } from '../intent/model.js';
import { type Ignored, PortRateLimit, packetInOrigin, servePacketIns } from '../packet-in.js';
import { appOf } from '../pipeline/cookies.js';
import { answerDhcp } from './dhcp-answer.js';
import { buildDhcpFrame, DHCP, DhcpParseError, parseDhcpFrame } from './dhcp-packet.js';
import { answerDhcp6 } from './dhcp6-answer.js';
import { buildDhcp6Frame, DHCP6, Dhcp6ParseError, parseDhcp6Frame } from './dhcp6-packet.js';

/** What the responder reads of the running controller. */
export interface DhcpContext {
  chassisOfDatapath(dpid: string): string | undefined;
  facts(): ChassisFacts;
  networkByVni(vni: number): Network | undefined;
  endpointByMac(networkId: string, mac: string): Endpoint | undefined;
  /** The network's gateway address on a weft router, if it is on one. */
  gatewayOf?(networkId: string): string | undefined;
  /** False on an HA standby: only the leader answers (it alone holds the switches). */
  isLeader(): boolean;
  /** Calls back with the id of each deleted endpoint (its last answer is then forgotten). */
  onEndpointDeleted?(cb: (endpointId: string) => void): void;
}

/** Per VM port: a client retries every few seconds; more than this is a VM flooding weft. */
const PER_PORT_RATE = 5;
const PER_PORT_BURST = 10;
const ETHERTYPE_IPV6 = 0x86dd;

/** `reply`: what was answered, by name (DHCPv4 offer, ack, nak; DHCPv6 advertise, reply). */
type Answered = { endpointId: string; reply: string };
export type DhcpOutcome =
  | ({ kind: 'answered'; out: PacketOut } & Answered)
  | { kind: 'ignored'; reason: string; endpointId?: string; quiet?: boolean }
  | { kind: 'not-dhcp' };

/** weft's last answer to one endpoint, as its API status shows it. */
export interface DhcpAnswerNote {
  reply: 'offer' | 'ack' | 'nak';
  address: string;
  at: string;
}

/** weft's last DHCPv6 answer to one endpoint that leased it addresses, and those addresses. */
export interface Dhcp6AnswerNote {
  reply: 'advertise' | 'reply';
  addresses: string[];
  at: string;
}

const NAMES6: Record<number, Dhcp6AnswerNote['reply']> = {
  [DHCP6.ADVERTISE]: 'advertise',
  [DHCP6.REPLY]: 'reply',
};

const NAMES: Record<number, DhcpAnswerNote['reply']> = {
  [DHCP.OFFER]: 'offer',
  [DHCP.ACK]: 'ack',
  [DHCP.NAK]: 'nak',
};

/**
 * Answers the DHCP requests the dhcp app's flow sends up (apps/dhcp): only for a request whose
 * switch port is where the endpoint owning its MAC is bound (OVSDB facts), in a network serving
 * DHCP, so a VM can neither get another's address nor make weft answer on a port it does not
 * own. The answer goes back out of that port alone with PACKET_OUT.
 */
export class DhcpResponder {
  readonly #limit: PortRateLimit;
  /** endpoint id -> the last answer; forgotten when the endpoint is gone (forgetEndpoint). */
  readonly #answers = new Map<string, DhcpAnswerNote>();
  readonly #answers6 = new Map<string, Dhcp6AnswerNote>();

  constructor(
    private readonly ctx: DhcpContext,
    now: () => number = () => performance.now(),
    private readonly wallClock: () => number = () => Date.now(),
  ) {
    this.#limit = new PortRateLimit(PER_PORT_RATE, PER_PORT_BURST, now);
  }

  /** The decision for one PACKET_IN of switch `dpid` (pure but for the per-port rate limit and the note of the last answer). */
  handle(dpid: string, msg: PacketIn): DhcpOutcome {
    if (appOf(msg.cookie) !== 'dhcp') return { kind: 'not-dhcp' };
    const origin = packetInOrigin(msg, () => this.ctx.isLeader());
    if ('kind' in origin) return origin;
    const { port, metadata } = origin;
    // Quiet: a flooding VM must not flood the log as well (the counter still counts).
    if (!this.#limit.take(dpid, port))
      return { kind: 'ignored', reason: `port ${port} exceeds ${PER_PORT_RATE} requests/s`, quiet: true };
    // Any IPv6 frame is DHCPv6's to judge (OVS matched its UDP ports, maybe past extension headers).
    if (msg.data.length >= 14 && msg.data.readUInt16BE(12) === ETHERTYPE_IPV6)
      return this.#handle6(dpid, port, metadata, msg.data);
    let req: ReturnType<typeof parseDhcpFrame>;
    try {
      req = parseDhcpFrame(msg.data);
    } catch (err) {
      if (err instanceof DhcpParseError) return { kind: 'ignored', reason: `malformed: ${err.message}` };
      throw err;
    }
    if (req.chaddr !== req.ethSrc)
      return {
        kind: 'ignored',
        reason: `chaddr ${req.chaddr} differs from the frame's source ${req.ethSrc}`,
      };
    const at = this.#endpointAt(dpid, port, metadata, req.ethSrc);
    if ('kind' in at) return at;
    const { network, endpoint } = at;
    const answer = answerDhcp(req, endpoint, network, this.ctx.gatewayOf?.(network.id));
    if ('ignored' in answer) return { kind: 'ignored', endpointId: endpoint.id, reason: answer.ignored };
    const out = packetOut(port, buildDhcpFrame(answer.reply));
    const r = answer.reply;
    this.#answers.set(endpoint.id, {
      reply: NAMES[r.messageType]!,
      address: r.yiaddr !== '0.0.0.0' ? r.yiaddr : r.ciaddr,
      at: new Date(this.wallClock()).toISOString(),
    });
    return { kind: 'answered', endpointId: endpoint.id, reply: NAMES[r.messageType]!, out };
  }

  /** A DHCPv6 message: the same proof of who asks, then the endpoint's IPv6 addresses (dhcp6-answer.ts). */
  #handle6(dpid: string, port: number, metadata: bigint | number, frame: Buffer): DhcpOutcome {
    let req: ReturnType<typeof parseDhcp6Frame>;
    try {
      req = parseDhcp6Frame(frame);
    } catch (err) {
      if (err instanceof Dhcp6ParseError)
        return { kind: 'ignored', reason: `malformed DHCPv6: ${err.message}` };
      throw err;
    }
    const at = this.#endpointAt(dpid, port, metadata, req.ethSrc);
    if ('kind' in at) return at;
    const answer = answerDhcp6(req, at.endpoint, at.network);
    if ('ignored' in answer) return { kind: 'ignored', endpointId: at.endpoint.id, reason: answer.ignored };
    const r = answer.reply;
    let data: Buffer;
    try {
      data = buildDhcp6Frame(r);
    } catch (err) {
      return {
        kind: 'ignored',
        endpointId: at.endpoint.id,
        reason: `answer not encodable: ${(err as Error).message}`,
      };
    }
    const reply = NAMES6[r.messageType]!;
    // What the endpoint holds: an answer leasing it addresses (not a Confirm's or Release's status).
    const addresses = (r.iaNa ?? []).flatMap((ia) =>
      ia.addresses.filter((a) => a.valid > 0).map((a) => a.address),
    );
    if (addresses.length > 0)
      this.#answers6.set(at.endpoint.id, { reply, addresses, at: new Date(this.wallClock()).toISOString() });
    return { kind: 'answered', endpointId: at.endpoint.id, reply, out: packetOut(port, data) };
  }

  /**
   * The network (by the VNI classify put in metadata) and the endpoint owning `mac` there, proven
   * to be bound to the port the request came in on; else why the request is ignored.
   */
  #endpointAt(
    dpid: string,
    port: number,
    metadata: bigint | number,
    mac: string,
  ): { network: Network; endpoint: Endpoint } | Extract<DhcpOutcome, { kind: 'ignored' }> {
    const network = this.ctx.networkByVni(Number(BigInt(metadata) & 0xffffffn));
    if (!network) return { kind: 'ignored', reason: `no network has VNI ${metadata}` };
    const endpoint = this.ctx.endpointByMac(network.id, mac);
    if (!endpoint) return { kind: 'ignored', reason: `no endpoint of ${network.id} has MAC ${mac}` };
    const chassisId = this.ctx.chassisOfDatapath(dpid);
    const b = this.ctx.facts().bindings.get(endpoint.ifaceId);
    if (!b || b.chassisId !== chassisId || b.ofport !== port) {
      return {
        kind: 'ignored',
        endpointId: endpoint.id,
        reason: `MAC ${mac} is endpoint ${endpoint.id}'s, which is not bound to port ${port} of ${chassisId ?? dpid}`,
      };
    }
    return { network, endpoint };
  }

  /** weft's last answer to this endpoint, if any since start. */
  lastAnswer(endpointId: string): DhcpAnswerNote | undefined {
    return this.#answers.get(endpointId);
  }

  /** weft's last DHCPv6 answer to this endpoint, if any since start. */
  lastAnswer6(endpointId: string): Dhcp6AnswerNote | undefined {
    return this.#answers6.get(endpointId);
  }

  forgetEndpoint(endpointId: string): void {
    this.#answers.delete(endpointId);
    this.#answers6.delete(endpointId);
  }

  /** Forgets the rate-limit state of a switch that went away. */
  forget(dpid: string): void {
    this.#limit.forget(dpid);
  }
}

/** The answer, out of the port the request came in on only. */
const packetOut = (port: number, data: Buffer): PacketOut => ({
  type: 'PACKET_OUT',
  xid: 0,
  bufferId: OFP_NO_BUFFER,
  inPort: ofpp.CONTROLLER,
  actions: [{ type: 'output', port, maxLen: 0 }],
  data,
});

/** Wires a responder to every switch's PACKET_IN; answers, counts and logs each outcome. */
export function startDhcpResponder(
  switches: SwitchRegistry,
  ctx: DhcpContext,
  log: Logger,
  metrics?: Registry,
): DhcpResponder {
  const responder = new DhcpResponder(ctx);
  ctx.onEndpointDeleted?.((id) => responder.forgetEndpoint(id));
  const replies = new Counter({
    name: 'weft_dhcp_replies_total',
    help: 'DHCP answers weft sent, by type (offer, ack, nak; DHCPv6 advertise, reply)',
    labelNames: ['type'],
    registers: metrics ? [metrics] : [],
  });
  const ignored = new Counter({
    name: 'weft_dhcp_ignored_total',
    help: 'DHCP requests weft did not answer (malformed, not the port of the MAC, rate limited, ...)',
    registers: metrics ? [metrics] : [],
  });
  servePacketIns<Answered, Ignored & { endpointId?: string }>(
    switches,
    {
      handle: (dpid, msg) => responder.handle(dpid, msg),
      forget: (dpid) => responder.forget(dpid),
      ignored: (dpid, o) => {
        ignored.inc();
        const line = { dpid, endpoint: o.endpointId, reason: o.reason };
        if (o.quiet) log.debug(line, 'dhcp request ignored');
        else log.warn(line, 'dhcp request ignored');
      },
      answered: (dpid, o) => {
        replies.inc({ type: o.reply });
        log.info({ dpid, endpoint: o.endpointId, reply: o.reply }, 'dhcp request answered');
        return { endpoint: o.endpointId };
      },
      notSent: 'dhcp answer not sent',
    },
    log,
  );
  return responder;
}
