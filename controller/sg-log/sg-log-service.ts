import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { ACL_COOKIE_KIND } from '../../apps/acl/network-acl.js';
import { admittingRule, type GroupRule } from '../../apps/acl/rule-match.js';
import { SG_ACCEPTED_KIND, SG_DENIED_KIND } from '../../apps/acl/sg-log.js';
import type { PacketIn } from '../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { Endpoint, Network, NetworkAcl } from '../intent/model.js';
import { type Ignored, onPacketIns, PortRateLimit, packetInField, packetInOrigin } from '../packet-in.js';
import { appOf, objectCookie } from '../pipeline/cookies.js';
import { METADATA_VNI_MASK, REG_OUTPORT } from '../pipeline/registers.js';
import { TABLE } from '../pipeline/tables.js';
import type { SgLogEntry, SgLogWriter } from './sg-log-book.js';
import { readLoggedFrame } from './sg-log-frame.js';

/** What the security-group log reads of the running controller. */
export interface SgLogContext {
  chassisOfDatapath(dpid: string): string | undefined;
  networkByVni(vni: number): Pick<Network, 'id'> | undefined;
  endpointByMac(networkId: string, mac: string): Pick<Endpoint, 'id' | 'tenantId' | 'networkId'> | undefined;
  /** False on an HA standby: only the leader logs (it alone holds the switches). */
  isLeader(): boolean;
  /** The rules of the endpoint's groups, remote groups resolved: to name the rule that admitted a connection. */
  rulesOf?(endpointId: string): GroupRule[];
  /** The network's ACLs (those with `log` make entries). */
  aclsOf?(networkId: string): ReadonlyArray<Pick<NetworkAcl, 'id' | 'action' | 'log'>>;
}

/**
 * A second bound behind the switch's per-endpoint meter (apps/acl), for a switch where that meter
 * is missing (a datapath without meters, one not yet reconciled). Per endpoint, as the meter is:
 * keyed by the endpoint's port (in_port on the way out, the output register on the way in, where
 * in_port is the sender's and, for every remote sender, the same tunnel port).
 */
export const SG_LOG_PORT_RATE = 20;
export const SG_LOG_PORT_BURST = 40;

/** Why a PACKET_IN of a logging flow made no entry: a bounded set, the metric's `reason` label. */
export const SG_LOG_IGNORED = [
  'standby',
  'no-origin',
  'rate-limited',
  'malformed',
  'unknown-network',
  'unknown-endpoint',
  'cookie-mismatch',
] as const;
export type SgLogIgnoredCause = (typeof SG_LOG_IGNORED)[number];

export interface SgLogIgnored extends Ignored {
  cause: SgLogIgnoredCause;
  endpointId?: string;
}

/** The decision on one PACKET_IN: not a security group's, ignored (why), or an entry to log. */
export type SgLogOutcome =
  | { kind: 'not-sg-log' }
  | ({ kind: 'ignored' } & SgLogIgnored)
  | { kind: 'logged'; entry: Omit<SgLogEntry, 'seq'> };

/** Which side of the endpoint a table logs for, and where its MAC is in the frame. */
const DIRECTION = new Map<number, SgLogEntry['direction']>([
  [TABLE.EGRESS_SG_CT, 'egress'],
  [TABLE.INGRESS_SG_CT, 'ingress'],
  [TABLE.EGRESS_ACL, 'egress'],
  [TABLE.INGRESS_ACL, 'ingress'],
]);
const ACL_TABLES = new Set<number>([TABLE.EGRESS_ACL, TABLE.INGRESS_ACL]);

const ignored = (cause: SgLogIgnoredCause, reason: string, endpointId?: string): SgLogOutcome => ({
  kind: 'ignored',
  cause,
  reason,
  // Every ignored packet is logged at debug only: each one is a packet a VM can send at will.
  quiet: true,
  ...(endpointId !== undefined ? { endpointId } : {}),
});

const aclVerdict = (acl: Pick<NetworkAcl, 'action'>): SgLogEntry['verdict'] =>
  acl.action === 'allow' ? 'accepted' : 'denied';

/** A security group's logging flow of the endpoint: its denied flow or its commit flows. */
function sgVerdict(cookie: bigint, endpointId: string): SgLogEntry['verdict'] | undefined {
  if (cookie === objectCookie('acl', SG_DENIED_KIND, endpointId)) return 'denied';
  if (cookie === objectCookie('acl', SG_ACCEPTED_KIND, endpointId)) return 'accepted';
  return undefined;
}

/**
 * Turns the PACKET_INs of the security groups' logging flows (apps/acl: a denied packet's drop
 * flow, an accepted connection's commit, in the egress and ingress security-group conntrack
 * tables) into log entries. The flow's cookie names the endpoint it logs for (`sg-denied/<id>`
 * or `sg-port/<id>`); the frame's MAC in the network its metadata names must be that endpoint's,
 * so an entry is never attributed to an endpoint the switch did not log for. A logging network
 * ACL's flows (the egress and ingress ACL tables) name the ACL instead (`acl/<id>`): it must be a
 * logging ACL of that network, and the MAC names the endpoint. Nothing is sent back.
 */
export class SecurityGroupLog {
  readonly #limit: PortRateLimit;

  constructor(
    private readonly ctx: SgLogContext,
    now: () => number = () => performance.now(),
    private readonly wallClock: () => number = () => Date.now(),
  ) {
    this.#limit = new PortRateLimit(SG_LOG_PORT_RATE, SG_LOG_PORT_BURST, now);
  }

  /** The decision for one PACKET_IN of switch `dpid` (pure but for the per-port rate limit). */
  handle(dpid: string, msg: PacketIn): SgLogOutcome {
    const direction = DIRECTION.get(msg.tableId);
    // Another app's flow in these tables (a table miss, say) is not a log entry of anyone's.
    if (!direction || appOf(msg.cookie) !== 'acl') return { kind: 'not-sg-log' };
    if (!this.ctx.isLeader()) return ignored('standby', 'this controller is the standby');
    // The leader was asked above, so that the standby has its own cause.
    const origin = packetInOrigin(msg, () => true);
    if ('kind' in origin) return ignored('no-origin', origin.reason);
    const { port, metadata } = origin;
    // Per endpoint, as the switch's meter is: on the way in, its port is the output register's
    // (in_port is the sender's, often the tunnel, which every remote sender shares).
    const own = direction === 'ingress' ? packetInField(msg, REG_OUTPORT) : port;
    const limited = own === undefined ? port : Number(own);
    if (!this.#limit.take(dpid, limited))
      return ignored('rate-limited', `port ${limited} exceeds ${SG_LOG_PORT_RATE} log entries/s`);
    const packet = readLoggedFrame(msg.data);
    if (!packet) return ignored('malformed', `frame of ${msg.data.length} bytes has no Ethernet header`);
    const vni = Number(BigInt(metadata) & METADATA_VNI_MASK);
    const network = this.ctx.networkByVni(vni);
    if (!network) return ignored('unknown-network', `no network has VNI ${vni}`);
    // Egress: the endpoint sent it; ingress: it was to receive it.
    const mac = direction === 'egress' ? packet.ethSrc : packet.ethDst;
    const endpoint = this.ctx.endpointByMac(network.id, mac);
    if (!endpoint) return ignored('unknown-endpoint', `no endpoint of ${network.id} has MAC ${mac}`);
    // A network ACL's flow names the ACL (cookie `acl/<id>`); a security group's the endpoint.
    const aclTable = ACL_TABLES.has(msg.tableId);
    const acl = aclTable ? this.loggingAcl(network.id, msg.cookie) : undefined;
    const verdict = aclTable ? acl && aclVerdict(acl) : sgVerdict(msg.cookie, endpoint.id);
    // Another endpoint's flow (a MAC that moved since), or an acl flow that does not log.
    if (!verdict) {
      const nor = aclTable ? ` nor of a logging ACL of ${network.id}` : '';
      return ignored(
        'cookie-mismatch',
        `cookie 0x${msg.cookie.toString(16)} is no logging flow of endpoint ${endpoint.id}${nor}`,
        endpoint.id,
      );
    }
    const { ethSrc: _s, ethDst: _d, ...fields } = packet;
    // Which rule let the connection in (or out), read from the intent as it is now.
    const by =
      !acl && verdict === 'accepted' && this.ctx.rulesOf
        ? admittingRule(this.ctx.rulesOf(endpoint.id), { direction, ...fields })
        : undefined;
    return {
      kind: 'logged',
      entry: {
        at: new Date(this.wallClock()).toISOString(),
        verdict,
        direction,
        // A switch whose chassis is not known (its OVSDB connection is down) is named by its dpid.
        chassis: this.ctx.chassisOfDatapath(dpid) ?? dpid,
        endpointId: endpoint.id,
        tenantId: endpoint.tenantId,
        networkId: endpoint.networkId,
        ...fields,
        ...(by ? { securityGroupId: by.groupId, ruleId: by.rule.id } : {}),
        ...(acl ? { networkAclId: acl.id } : {}),
      },
    };
  }

  /** The network's logging ACL whose flows carry `cookie`, as the intent has it now. */
  private loggingAcl(networkId: string, cookie: bigint) {
    return this.ctx
      .aclsOf?.(networkId)
      .find((a) => a.log === true && cookie === objectCookie('acl', ACL_COOKIE_KIND, a.id));
  }

  /** Forgets the rate-limit state of a switch that went away. */
  forget(dpid: string): void {
    this.#limit.forget(dpid);
  }
}

/**
 * Wires a SecurityGroupLog to every switch's PACKET_IN: each entry to `writer` (the book, or the
 * Redis stream the books mirror), counted and logged as one info line (the record that outlives
 * the book's ring; written with or without the shared log); each ignored packet counted and
 * logged at debug. onPacketIns, not servePacketIns (controller/packet-in.ts): that one sends an answer
 * back, and the log answers nothing; the same guard keeps a failing handler off the session.
 */
export function startSecurityGroupLog(
  switches: SwitchRegistry,
  ctx: SgLogContext,
  writer: SgLogWriter,
  log: Logger,
  registry?: Registry,
): SecurityGroupLog {
  const service = new SecurityGroupLog(ctx);
  const registers = registry ? [registry] : [];
  const entries = new Counter({
    name: 'weft_sg_log_entries_total',
    help: 'Security-group log entries, by verdict (accepted, denied) and direction (egress, ingress) of the endpoint',
    labelNames: ['verdict', 'direction'],
    registers,
  });
  const ignoredTotal = new Counter({
    name: 'weft_sg_log_ignored_total',
    help: 'Security-group logging packets that made no entry, by reason (rate-limited, unknown-endpoint, standby, ...)',
    labelNames: ['reason'],
    registers,
  });
  // Every series from the start at 0: a rate over a series that appears later misses its first count.
  for (const verdict of ['accepted', 'denied'])
    for (const direction of ['egress', 'ingress']) entries.inc({ verdict, direction }, 0);
  for (const reason of SG_LOG_IGNORED) ignoredTotal.inc({ reason }, 0);

  let unshared = false;
  onPacketIns(switches, service, log, 'packet-in not logged: its handler failed', (_sw, dpid, outcome) => {
    if (outcome.kind === 'ignored') {
      ignoredTotal.inc({ reason: outcome.cause });
      log.debug({ dpid, endpoint: outcome.endpointId, reason: outcome.reason }, 'security group log ignored');
      return;
    }
    if (outcome.kind !== 'logged') return;
    entries.inc({ verdict: outcome.entry.verdict, direction: outcome.entry.direction });
    // Appends resolve in order (one connection), so the lines keep the order of the reports.
    writer.append(outcome.entry).then(
      (e) => {
        unshared = false;
        logEntry(log, dpid, e);
      },
      (err: Error) => {
        // The line is the lasting record: written without a seq when the shared log is down.
        if (!unshared)
          log.warn({ err: err.message }, 'security group log: entries not shared until Redis answers');
        unshared = true;
        logEntry(log, dpid, outcome.entry);
      },
    );
  });
  return service;
}

/** One info line per entry: what outlives the book; `seq` absent when the shared log was down. */
function logEntry(log: Logger, dpid: string, e: Omit<SgLogEntry, 'seq'> & { seq?: number }): void {
  log.info(
    {
      seq: e.seq,
      dpid,
      chassis: e.chassis,
      endpoint: e.endpointId,
      tenant: e.tenantId,
      network: e.networkId,
      verdict: e.verdict,
      direction: e.direction,
      protocol: e.protocol,
      src: e.src,
      dst: e.dst,
      srcPort: e.srcPort,
      dstPort: e.dstPort,
      icmpType: e.icmpType,
      icmpCode: e.icmpCode,
      securityGroup: e.securityGroupId,
      rule: e.ruleId,
      networkAcl: e.networkAclId,
    },
    'security group log',
  );
}
