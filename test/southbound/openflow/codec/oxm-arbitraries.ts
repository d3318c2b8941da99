/**
 * fast-check arbitraries for matches, actions, instructions and buckets, in the exact shape the
 * decoder produces (so decode(encode(x)) can be compared with x). Part W's message property tests
 * may reuse them.
 */
import fc from 'fast-check';
import type { Action } from '../../../../southbound/openflow/codec/actions.js';
import type { Bucket } from '../../../../southbound/openflow/codec/buckets.js';
import type { Instruction } from '../../../../southbound/openflow/codec/instructions.js';
import type { Match, OxmTlv, OxmValue } from '../../../../southbound/openflow/codec/match.js';
import type { Subfield } from '../../../../southbound/openflow/codec/nx-actions.js';
import { OXM_FIELDS, type OxmField } from '../../../../southbound/openflow/codec/oxm-fields.js';
import { readIpv4, readIpv6, readMac } from '../../../../southbound/openflow/codec/values.js';

const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b));

export function valueArb(f: OxmField): fc.Arbitrary<OxmValue> {
  switch (f.kind) {
    case 'uint':
      return fc.integer({ min: 0, max: 2 ** (8 * f.width) - 1 });
    case 'u64':
      return fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
    case 'u128':
      return fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
    case 'mac':
      return bytes(6).map((b) => readMac(b, 0));
    case 'ipv4':
      return bytes(4).map((b) => readIpv4(b, 0));
    case 'ipv6':
      return bytes(16).map((b) => readIpv6(b, 0));
  }
}

export function tlvArb(f: OxmField): fc.Arbitrary<OxmTlv> {
  const v = valueArb(f);
  if (!f.maskable) return v.map((value) => ({ field: f.name, value }));
  return fc
    .tuple(v, fc.option(valueArb(f), { nil: undefined }))
    .map(([value, mask]) => (mask === undefined ? { field: f.name, value } : { field: f.name, value, mask }));
}

export const anyTlv: fc.Arbitrary<OxmTlv> = fc.oneof(...OXM_FIELDS.map(tlvArb));
export const matchArb: fc.Arbitrary<Match> = fc.array(anyTlv, { maxLength: 8 });

const u8 = fc.integer({ min: 0, max: 255 });
const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.nat({ max: 0xffffffff });

const subfieldArb: fc.Arbitrary<Subfield> = fc
  .constantFrom(...OXM_FIELDS.filter((f) => f.kind === 'uint' || f.kind === 'u64'))
  .chain((f) =>
    fc
      .integer({ min: 1, max: Math.min(f.bits, 64) })
      .chain((nBits) =>
        fc.integer({ min: 0, max: f.bits - nBits }).map((ofs) => ({ field: f.name, ofs, nBits })),
      ),
  );

const ofAction: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ type: fc.constant('output' as const), port: u32, maxLen: u16 }),
  fc.constantFrom(
    ...(
      [
        'copy_ttl_out',
        'copy_ttl_in',
        'dec_mpls_ttl',
        'pop_vlan',
        'dec_nw_ttl',
        'pop_pbb',
        'ct_clear',
      ] as const
    ).map((type) => ({ type }) as Action),
  ),
  fc.record({ type: fc.constantFrom('set_mpls_ttl' as const, 'set_nw_ttl' as const), ttl: u8 }),
  fc.record({
    type: fc.constantFrom(
      'push_vlan' as const,
      'push_mpls' as const,
      'pop_mpls' as const,
      'push_pbb' as const,
    ),
    ethertype: u16,
  }),
  fc.record({ type: fc.constant('set_queue' as const), queueId: u32 }),
  fc.record({ type: fc.constant('group' as const), groupId: u32 }),
  anyTlv.map((t) => ({ type: 'set_field' as const, ...t })),
  anyTlv.map((t) => ({ type: 'reg_load2' as const, ...t })),
  fc.record({
    type: fc.constant('experimenter' as const),
    experimenter: u32.filter((e) => e !== 0x2320),
    data: fc.nat({ max: 3 }).chain((n) => bytes(n * 8)),
  }),
);

const nxAction: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ type: fc.constant('resubmit' as const), port: u16, table: u8 }),
  fc.record({ type: fc.constant('output_trunc' as const), port: u16, maxLen: u32 }),
  fc.record({ type: fc.constant('resubmit' as const), port: u16, table: u8, ct: fc.constant(true) }),
  fc.record({
    type: fc.constant('resubmit' as const),
    port: u16,
    table: fc.constant(255),
    legacy: fc.constant(true),
  }),
  subfieldArb.chain((src) =>
    subfieldArb
      .filter((d) => d.nBits >= src.nBits)
      .map((d) => ({
        type: 'reg_move' as const,
        src,
        dst: { field: d.field, ofs: d.ofs, nBits: src.nBits },
      })),
  ),
  subfieldArb.chain((dst) =>
    fc
      .bigInt({ min: 0n, max: (1n << BigInt(dst.nBits)) - 1n })
      .map((value) => ({ type: 'reg_load' as const, dst, value })),
  ),
  fc.nat({ max: 20 }).chain((n) => bytes(6 + n * 8).map((data) => ({ type: 'note' as const, data }))),
  fc.array(u16, { maxLength: 9 }).map((controllerIds) => ({ type: 'dec_ttl' as const, controllerIds })),
  fc.constant<Action>({ type: 'dec_ttl', controllerIds: [0], legacy: true }),
  fc.record({ type: fc.constant('controller' as const), maxLen: u16, controllerId: u16, reason: u8 }),
  fc
    .record(
      {
        type: fc.constant('controller' as const),
        maxLen: u16,
        controllerId: u16,
        reason: u8,
        userdata: fc.nat({ max: 12 }).chain(bytes),
        pause: fc.constant(true),
        meterId: u32,
        v2: fc.constant(true),
      },
      { requiredKeys: ['type', 'maxLen', 'controllerId', 'reason', 'v2'] },
    )
    .map((a) => {
      // The decoder sets v2 only when nothing else implies CONTROLLER2.
      if (a.userdata !== undefined || a.pause || a.meterId !== undefined) {
        const { v2: _v2, ...rest } = a;
        return rest;
      }
      return a;
    }),
  fc.integer({ min: 2, max: 64 }).chain((nClauses) =>
    fc.record({
      type: fc.constant('conjunction' as const),
      id: u32,
      clause: fc.integer({ min: 0, max: nClauses - 1 }),
      nClauses: fc.constant(nClauses),
    }),
  ),
  fc.record(
    {
      type: fc.constant('nat' as const),
      flags: fc.integer({ min: 0, max: 31 }),
      ipv4Min: bytes(4).map((b) => readIpv4(b, 0)),
      ipv4Max: bytes(4).map((b) => readIpv4(b, 0)),
      ipv6Min: bytes(16).map((b) => readIpv6(b, 0)),
      ipv6Max: bytes(16).map((b) => readIpv6(b, 0)),
      protoMin: u16,
      protoMax: u16,
    },
    { requiredKeys: ['type', 'flags'] },
  ),
);

function ctArb(inner: fc.Arbitrary<Action>): fc.Arbitrary<Action> {
  return fc.record({
    type: fc.constant('ct' as const),
    flags: fc.integer({ min: 0, max: 3 }),
    zone: fc.oneof(
      u16,
      subfieldArb.filter((s) => s.nBits <= 16),
    ),
    table: u8,
    alg: u16,
    actions: fc.array(inner, { maxLength: 3 }),
  });
}

const flatAction = fc.oneof(ofAction, nxAction);
export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: flatAction, weight: 6 },
  { arbitrary: ctArb(flatAction), weight: 1 },
);
export const actionsArb = fc.array(actionArb, { maxLength: 6 });

export const instructionArb: fc.Arbitrary<Instruction> = fc.oneof(
  fc.record({ type: fc.constant('goto_table' as const), tableId: u8 }),
  fc.record({
    type: fc.constant('write_metadata' as const),
    metadata: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
    mask: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  }),
  fc.record({
    type: fc.constantFrom('apply_actions' as const, 'write_actions' as const),
    actions: actionsArb,
  }),
  fc.constant({ type: 'clear_actions' as const }),
  fc.record({ type: fc.constant('meter' as const), meterId: u32 }),
  fc.record({
    type: fc.constant('experimenter' as const),
    experimenter: u32,
    data: fc.nat({ max: 3 }).chain((n) => bytes(n * 8)),
  }),
);
export const instructionsArb = fc.array(instructionArb, { maxLength: 5 });

export const bucketArb: fc.Arbitrary<Bucket> = fc.record({
  weight: u16,
  watchPort: u32,
  watchGroup: u32,
  actions: actionsArb,
});
export const bucketsArb = fc.array(bucketArb, { maxLength: 4 });
