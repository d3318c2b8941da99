import { output, setField } from '../controller/pipeline/flow.js';
import { metadataForVni } from '../controller/pipeline/registers.js';
import type { Action } from '../southbound/openflow/codec/actions.js';
import type { Instruction } from '../southbound/openflow/codec/instructions.js';
import type { Match, OxmTlv } from '../southbound/openflow/codec/match.js';

/**
 * Interned parts of flows: match lists, TLVs and instruction lists that many flows share (one per
 * OpenFlow port number, per VNI, per tunnel destination), built once and frozen. A full recompute
 * at scale builds ~800,000 flows; most of their parts repeat, and every object not built is
 * neither allocated nor copied by the garbage collector. Frozen, because flows are never mutated
 * once built and a shared part must not be; the reconciler also keys frozen lists once
 * (controller/reconcile/canonical.ts).
 *
 * Each cache is bounded: past its limit it starts over (the parts are values, so a rebuilt one is
 * as good as the old; flows still holding the old one keep it alive).
 */
export class Interner<K, V> {
  private readonly map = new Map<K, V>();
  constructor(
    private readonly make: (key: K) => V,
    private readonly limit = 65536,
  ) {}

  get(key: K): V {
    let v = this.map.get(key);
    if (v === undefined) {
      if (this.map.size >= this.limit) this.map.clear();
      v = this.make(key);
      this.map.set(key, v);
    }
    return v;
  }
}

/** Deep-freezes a part built from plain objects and arrays (bigints and strings are immutable). */
export function frozen<T>(v: T): T {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v;
  for (const x of Object.values(v as object)) frozen(x);
  return Object.freeze(v);
}

export const internedTlv = (field: string) =>
  new Interner<number | bigint | string, OxmTlv>((value) => frozen({ field, value }));

export const internedMatch = (make: (key: number) => Match) =>
  new Interner<number, Match>((key) => frozen(make(key)));

export const internedInstructions = <K>(make: (key: K) => Instruction[]) =>
  new Interner<K, Instruction[]>((key) => frozen(make(key)));

/** The `metadata=VNI` match field of a network, shared by every flow of it. */
export const vniMetadataTlv = new Interner<number, OxmTlv>(
  (vni) => frozen({ field: 'metadata', value: metadataForVni(vni) }),
  100_000,
);

/** `in_port=N`, shared by every flow matching that port (classify, port security). */
export const inPortTlv = internedTlv('in_port');

/**
 * The key of the way into the tunnel towards one chassis: `tunnelIp|vni|port`, the VNI left out
 * in the asap2 profile (there the per-VNI port implies it). See tunnelActions.
 */
export const tunnelKey = (offload: 'none' | 'asap2', vni: number, tunnelIp: string, port: number): string =>
  `${tunnelIp}|${offload === 'asap2' ? '' : vni}|${port}`;

/** `set_field:IP->tun_dst[,set_field:VNI->tun_id],output:PORT` for a tunnelKey. */
export function tunnelActions(key: string): Action[] {
  const [tunnelIp, vni, port] = key.split('|') as [string, string, string];
  const actions = [setField('tun_dst', tunnelIp)];
  if (vni !== '') actions.push(setField('tun_id', BigInt(vni)));
  actions.push(output(Number(port)));
  return actions;
}
