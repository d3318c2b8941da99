import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../controller/pipeline/tables.js';
import type { TraceHop } from '../../../controller/trace/trace-across.js';
import { verdictOf } from '../../../controller/trace/verdict.js';

/**
 * Why a packet dropped in port-security was dropped, by whose flow: the endpoint's own checks
 * (its table miss), a router's guard against a VM speaking as it, or the DHCP server guard of a
 * network weft serves DHCP on.
 */
const dropAt = (owner: string | undefined): TraceHop[] => [
  {
    chassis: 'hv1',
    inPort: 1,
    outputs: [],
    notes: [],
    steps: [
      {
        pass: 0,
        depth: 0,
        table: TABLE.PORT_SECURITY,
        tableName: 'port-security',
        drop: true,
        ...(owner
          ? { flow: { priority: 130, cookie: '0x1', owner, match: 'arp,metadata=0x64', actions: 'drop' } }
          : {}),
      },
    ],
  },
];
const reasonFor = (owner: string | undefined) =>
  verdictOf(dropAt(owner), { arp: false, what: 'ping to 10.0.0.9' }).droppedAt?.reason;

describe('trace verdict of a drop in port-security', () => {
  it('names the router a VM posed as, the DHCP server guard, or the endpoint checks', () => {
    expect(reasonFor('router/r1')).toBe(
      'no VM may speak as router r1 (ARP, packets from or advertisements of its addresses)',
    );
    expect(reasonFor('network/red')).toBe(
      'weft serves DHCP on this network: no VM may answer as a DHCP server (UDP from port 67)',
    );
    for (const owner of [undefined, 'table-miss/10'])
      expect(reasonFor(owner)).toBe(
        "port security: only the endpoint's own MAC and addresses may leave its port",
      );
  });
});
