import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../controller/pipeline/tables.js';
import type { RouterPunt } from '../../../controller/trace/router-answer.js';
import { verdictOf } from '../../../controller/trace/verdict.js';

/**
 * A routed probe to an address the router resolves by ARP ends at the router for now, and the
 * verdict says whom the controller asks: a VIP's holders, or the network's VLAN bindings.
 */
const punt = (holders?: string[]): RouterPunt => ({
  chassis: 'hv1',
  router: 'r1',
  table: TABLE.L3_NEIGHBOR,
  step: { pass: 0, depth: 0, table: TABLE.L3_NEIGHBOR, tableName: 'l3-neighbor', drop: false },
  ipDst: '10.1.0.100',
  resolving: { ip: '10.1.0.100', networkId: 'web', ...(holders ? { holders } : {}) },
});
const reasonOf = (p: RouterPunt) =>
  verdictOf([], { arp: false, what: 'ping from d1 to 10.1.0.100' }, false, p).droppedAt?.reason;

describe('trace verdict of a routed probe awaiting ARP', () => {
  it("names a VIP's holders, else the VLAN bindings", () => {
    expect(reasonOf(punt(['va', 'vb']))).toBe(
      'router r1 knows no MAC for 10.1.0.100 yet: the controller asks for it by ARP of the endpoints allowed it (va, vb: the one holding it answers) and drops this packet; the ones after it follow once it answers',
    );
    expect(reasonOf(punt(['va']))).toMatch(
      /by ARP of the endpoint allowed it \(va: the one holding it answers\) and drops/,
    );
    expect(reasonOf(punt())).toMatch(/by ARP out of web's VLAN bindings and drops this packet/);
  });
});
