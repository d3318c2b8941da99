import type { Logger } from 'pino';
import type { PacketIn, PacketOut } from '../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import { TokenBucket } from '../southbound/openflow/session/token-bucket.js';

/**
 * What the controller's packet-in responders share (DHCP, the routers' ICMP errors): reading the
 * match OVS sends with a PACKET_IN, a rate limit per switch port, and the wiring to every switch:
 * each PACKET_IN to the responder, its answer back as a PACKET_OUT, each outcome counted and
 * logged by the caller, the rate-limit state of a switch forgotten when it goes away.
 */

/** A numeric field of the PACKET_IN's match (in_port, metadata), if present. */
export function packetInField(msg: PacketIn, field: string): number | bigint | undefined {
  const t = msg.match.find((m) => m.field === field);
  return typeof t?.value === 'number' || typeof t?.value === 'bigint' ? t.value : undefined;
}

/** One token bucket per switch port: a VM flooding one responder cannot make weft work for it. */
export class PortRateLimit {
  readonly #buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(dpid: string, port: number): boolean {
    const key = `${dpid}/${port}`;
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(this.rate, this.burst, this.now);
      this.#buckets.set(key, bucket);
    }
    return bucket.take();
  }

  /** Forgets the state of a switch that went away. */
  forget(dpid: string): void {
    for (const key of this.#buckets.keys()) if (key.startsWith(`${dpid}/`)) this.#buckets.delete(key);
  }
}

/**
 * What every responder checks first, in the same words: only the leader answers (it alone holds
 * the switches), and a PACKET_IN must say which port and which network (metadata: the VNI in its
 * low 24 bits) it came from.
 */
export function packetInOrigin(
  msg: PacketIn,
  isLeader: () => boolean,
): { port: number; metadata: number | bigint } | ({ kind: 'ignored' } & Ignored) {
  if (!isLeader()) return { kind: 'ignored', reason: 'this controller is the standby', quiet: true };
  const inPort = packetInField(msg, 'in_port');
  const metadata = packetInField(msg, 'metadata');
  if (inPort === undefined || metadata === undefined)
    return { kind: 'ignored', reason: 'packet-in without in_port or metadata' };
  return { port: Number(inPort), metadata };
}

/** Why a responder did not answer; `quiet` ones are logged at debug (a flood must not flood the log). */
export interface Ignored {
  reason: string;
  quiet?: boolean;
}

/** A responder's decision on one PACKET_IN: not its own (`not-...`), ignored (why), or answered. */
export type PacketInOutcome<Answered, Ign extends Ignored = Ignored> =
  | { kind: `not-${string}` }
  | ({ kind: 'ignored' } & Ign)
  | ({ kind: 'answered'; out: PacketOut } & Answered);

export interface PacketInService<Answered, Ign extends Ignored = Ignored> {
  handle(dpid: string, msg: PacketIn): PacketInOutcome<Answered, Ign>;
  forget(dpid: string): void;
  /** Counts and logs an answer before it is sent; returns the log fields of its send failure. */
  answered(dpid: string, outcome: Answered): Record<string, unknown>;
  /** Counts and logs an ignored packet. */
  ignored(dpid: string, outcome: Ign): void;
  /** The message of a failed send ("dhcp answer not sent"). */
  notSent: string;
}

/**
 * Hands every switch's PACKET_IN to `handler.handle` and its outcome to `then`; forgets a switch's
 * state when it goes away. A throwing handler is logged (`failed`) and the packet dropped: a bug,
 * or a frame no check foresaw, must not reach the switch's session, which would drop the
 * connection to the whole hypervisor.
 */
export function onPacketIns<O>(
  switches: SwitchRegistry,
  handler: { handle(dpid: string, msg: PacketIn): O; forget(dpid: string): void },
  log: Logger,
  failed: string,
  then: (sw: { send(msg: PacketOut): unknown }, dpid: string, outcome: O) => void,
): void {
  switches.on('packet-in', (sw, msg) => {
    const dpid = sw.dpid ?? '';
    let outcome: O;
    try {
      outcome = handler.handle(dpid, msg);
    } catch (err) {
      log.error({ dpid, table: msg.tableId, err }, failed);
      return;
    }
    then(sw, dpid, outcome);
  });
  switches.on('switch-down', (sw) => {
    if (sw.dpid) handler.forget(sw.dpid);
  });
}

/** Serves every switch's PACKET_INs with `service` (see PacketInService). */
export function servePacketIns<A, I extends Ignored>(
  switches: SwitchRegistry,
  service: PacketInService<A, I>,
  log: Logger,
): void {
  onPacketIns(switches, service, log, 'packet-in not served: its handler failed', (sw, dpid, outcome) => {
    if (outcome.kind === 'ignored') {
      service.ignored(dpid, outcome as Extract<typeof outcome, { kind: 'ignored' }>);
      return;
    }
    if (outcome.kind !== 'answered') return;
    const fields = service.answered(dpid, outcome as Extract<typeof outcome, { kind: 'answered' }>);
    Promise.resolve(sw.send(outcome.out)).catch((err: unknown) =>
      log.warn({ dpid, ...fields, err }, service.notSent),
    );
  });
}
