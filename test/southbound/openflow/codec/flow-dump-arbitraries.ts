import fc from 'fast-check';
import {
  encodeMessage,
  type FlowStats,
  type Instruction,
  type Match,
} from '../../../../southbound/openflow/codec/index.js';
import { instructionsArb, matchArb } from './oxm-arbitraries.js';

/** A flow-stats entry with any match and instructions the codec models. */
export const flowStatsArb: fc.Arbitrary<FlowStats> = fc.record({
  tableId: fc.integer({ min: 0, max: 254 }),
  durationSec: fc.nat({ max: 0xffffffff }),
  durationNsec: fc.nat({ max: 999_999_999 }),
  priority: fc.integer({ min: 0, max: 0xffff }),
  idleTimeout: fc.integer({ min: 0, max: 0xffff }),
  hardTimeout: fc.integer({ min: 0, max: 0xffff }),
  flags: fc.integer({ min: 0, max: 0x1f }),
  cookie: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  packetCount: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  byteCount: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  match: matchArb,
  instructions: instructionsArb,
});

/** The replies of a dump of `parts` (REPLY_MORE on all but the last), as a switch sends them. */
export function dumpReplies(parts: FlowStats[][], xid = 7): Buffer[] {
  return parts.map((flows, i) =>
    encodeMessage({
      type: 'MULTIPART_REPLY',
      xid,
      flags: i < parts.length - 1 ? 1 : 0,
      body: { kind: 'FLOW', flows },
    }),
  );
}

/** One flow-stats entry with defaults for everything but match and instructions. */
export function simpleFlow(
  match: Match,
  instructions: Instruction[],
  over: Partial<FlowStats> = {},
): FlowStats {
  return {
    tableId: 40,
    durationSec: 3,
    durationNsec: 4,
    priority: 100,
    idleTimeout: 0,
    hardTimeout: 0,
    flags: 0,
    cookie: 0x77n,
    packetCount: 5n,
    byteCount: 600n,
    match,
    instructions,
    ...over,
  };
}
