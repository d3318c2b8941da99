import type { DesiredMeter } from '../../controller/pipeline/flow.js';
import { logMeterId } from '../../controller/pipeline/meters.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpr } from '../../southbound/openflow/codec/constants.js';
import type { LocalPort, SgLogging } from '../view.js';

/**
 * Security-group logging: what the switch sends the controller so that it can log a connection a
 * security group accepted or a packet an endpoint's policy denied (controller/sg-log). An
 * endpoint logs what any of its groups asks for. The copy carries the first 128 bytes (every
 * header up to TCP's ports) and is policed on the switch by the endpoint's own meter, so a flood
 * of denied packets costs the hypervisor at most SG_LOG_RATE_PPS upcalls a second per endpoint
 * (the meter drops the copy, never the packet: traffic is unaffected either way).
 */

export const SG_LOG_RATE_PPS = 20;
export const SG_LOG_BURST = 40;
/** Enough for Ethernet + 802.1Q + IPv6 + TCP's ports; the rest of the packet is of no use to a log. */
export const SG_LOG_MAX_LEN = 128;

/**
 * Cookie kinds (objectCookie('acl', kind, endpointId)) that tell the controller what a copy means:
 * from the rule flows that commit a new connection (accepted; the kind of every flow of the
 * endpoint's security groups), or from the flow that logs what nothing admitted (denied).
 */
export const SG_ACCEPTED_KIND = 'sg-port';
export const SG_DENIED_KIND = 'sg-denied';

/** Priority of the denied flow: above the table's miss (drop), below every flow that lets through. */
export const SG_DENIED_PRIORITY = 1;

type GroupLog = 'off' | 'denied' | 'accepted' | 'all' | undefined;

/** An endpoint's logging from its groups' `log` settings (undefined: logs nothing). */
export function sgLogging(logs: Iterable<GroupLog>): SgLogging | undefined {
  let denied = false;
  let accepted = false;
  for (const l of logs) {
    if (l === 'denied' || l === 'all') denied = true;
    if (l === 'accepted' || l === 'all') accepted = true;
  }
  return denied || accepted ? { denied, accepted } : undefined;
}

/**
 * A log copy: the first SG_LOG_MAX_LEN bytes to the controller, policed by meter `meterId` (a
 * port's log meter here, the chassis's ACL log meter in network-acl.ts). Frozen: shared by flows.
 */
export const logCopyOf = (meterId: number): Action =>
  Object.freeze({
    type: 'controller',
    maxLen: SG_LOG_MAX_LEN,
    controllerId: 0,
    reason: ofpr.ACTION,
    meterId,
    v2: true,
  }) as Action;

const copies = new Map<number, Action>();

/** The copy to the controller of a logging port, policed by its meter (one frozen action per port). */
export function logCopy(ofport: number): Action {
  let a = copies.get(ofport);
  if (!a) {
    a = logCopyOf(logMeterId(ofport));
    if (copies.size < 65536) copies.set(ofport, a);
  }
  return a;
}

/** The port's log meter, when it logs anything (its groups' flows carry the copies: it has groups). */
export function sgLogMeter(
  port: Pick<LocalPort, 'ofport' | 'sgLog' | 'securityGroupIds'>,
): DesiredMeter | undefined {
  if (!port.sgLog || port.securityGroupIds.length === 0) return undefined;
  return { meterId: logMeterId(port.ofport), kbps: SG_LOG_RATE_PPS, burstKb: SG_LOG_BURST, unit: 'pktps' };
}
