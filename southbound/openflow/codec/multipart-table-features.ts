import { ofptfpt } from './constants.js';
import { pad8, putU64, readFixedString, writeFixedString } from './msg-common.js';
import type { FeatureId, OxmId, TableFeatureProp, TableFeatures } from './multipart-types.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * ofp_table_features (64-byte fixed part + properties). Properties are TLVs padded to 8 whose
 * length excludes the padding; unknown property types stay opaque.
 */

const TABLE_FEATURES_FIXED = 64;
const OFP_MAX_TABLE_NAME_LEN = 32;

type PropKind = TableFeatureProp['kind'];
const kindByType = new Map<number, PropKind>([
  [ofptfpt.INSTRUCTIONS, 'instructions'],
  [ofptfpt.INSTRUCTIONS_MISS, 'instructions_miss'],
  [ofptfpt.NEXT_TABLES, 'next_tables'],
  [ofptfpt.NEXT_TABLES_MISS, 'next_tables_miss'],
  [ofptfpt.WRITE_ACTIONS, 'write_actions'],
  [ofptfpt.WRITE_ACTIONS_MISS, 'write_actions_miss'],
  [ofptfpt.APPLY_ACTIONS, 'apply_actions'],
  [ofptfpt.APPLY_ACTIONS_MISS, 'apply_actions_miss'],
  [ofptfpt.MATCH, 'match'],
  [ofptfpt.WILDCARDS, 'wildcards'],
  [ofptfpt.WRITE_SETFIELD, 'write_setfield'],
  [ofptfpt.WRITE_SETFIELD_MISS, 'write_setfield_miss'],
  [ofptfpt.APPLY_SETFIELD, 'apply_setfield'],
  [ofptfpt.APPLY_SETFIELD_MISS, 'apply_setfield_miss'],
  [ofptfpt.EXPERIMENTER, 'experimenter'],
  [ofptfpt.EXPERIMENTER_MISS, 'experimenter_miss'],
]);
const typeByKind = new Map<PropKind, number>([...kindByType].map(([t, k]) => [k, t]));

function readIds(r: OfReader): FeatureId[] {
  const ids: FeatureId[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const type = r.u16('id type');
    const len = r.u16('id length');
    if (len < 4) r.fail('bad-length', `instruction/action id length ${len} is below 4`, at + 2);
    ids.push(len === 4 ? { type } : { type, data: r.bytes(len - 4, 'id body') });
  }
  return ids;
}

function readOxmIds(r: OfReader): OxmId[] {
  const ids: OxmId[] = [];
  while (r.remaining > 0) {
    const header = r.u32('oxm id');
    ids.push(header >>> 16 === 0xffff ? { header, experimenter: r.u32('oxm experimenter') } : { header });
  }
  return ids;
}

function readProp(r: OfReader): TableFeatureProp {
  const at = r.offset;
  const propType = r.u16('property type');
  const len = r.u16('property length');
  if (len < 4) r.fail('bad-length', `table feature property length ${len} is below 4`, at + 2);
  const body = r.sub(len - 4, 'TABLE_FEATURES/property');
  r.pad(pad8(len), 'property padding');
  const kind = kindByType.get(propType);
  switch (kind) {
    case 'instructions':
    case 'instructions_miss':
    case 'write_actions':
    case 'write_actions_miss':
    case 'apply_actions':
    case 'apply_actions_miss':
      return { kind, ids: readIds(body) };
    case 'next_tables':
    case 'next_tables_miss':
      return { kind, tableIds: [...body.bytes(body.remaining)] };
    case 'match':
    case 'wildcards':
    case 'write_setfield':
    case 'write_setfield_miss':
    case 'apply_setfield':
    case 'apply_setfield_miss':
      return { kind, oxms: readOxmIds(body) };
    case 'experimenter':
    case 'experimenter_miss': {
      const experimenter = body.u32('experimenter');
      const expType = body.u32('exp_type');
      return { kind, experimenter, expType, data: body.bytes(body.remaining) };
    }
    default:
      return { kind: 'opaque', propType, data: body.bytes(body.remaining) };
  }
}

function writeProp(w: OfWriter, p: TableFeatureProp): void {
  const start = w.offset;
  w.u16(p.kind === 'opaque' ? p.propType : typeByKind.get(p.kind)!).u16(0);
  if ('ids' in p) {
    for (const id of p.ids)
      w.u16(id.type)
        .u16(4 + (id.data?.length ?? 0))
        .bytes(id.data ?? Buffer.alloc(0));
  } else if ('tableIds' in p) {
    for (const t of p.tableIds) w.u8(t);
  } else if ('oxms' in p) {
    for (const o of p.oxms) {
      w.u32(o.header);
      if (o.experimenter !== undefined) w.u32(o.experimenter);
    }
  } else if (p.kind === 'opaque') {
    w.bytes(p.data);
  } else {
    w.u32(p.experimenter).u32(p.expType).bytes(p.data);
  }
  const len = w.offset - start;
  w.patchU16(start + 2, len);
  w.zeros(pad8(len));
}

export function readTableFeatures(r: OfReader): TableFeatures[] {
  const tables: TableFeatures[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const len = r.u16('table features length');
    if (len < TABLE_FEATURES_FIXED) r.fail('bad-length', `table features length ${len} is below 64`, at);
    const t = r.sub(len - 2, 'TABLE_FEATURES/table');
    const tableId = t.u8('table_id');
    t.pad(5);
    const name = readFixedString(t, OFP_MAX_TABLE_NAME_LEN, 'table name');
    const metadataMatch = t.u64('metadata_match');
    const metadataWrite = t.u64('metadata_write');
    const config = t.u32('config');
    const maxEntries = t.u32('max_entries');
    const properties: TableFeatureProp[] = [];
    while (t.remaining > 0) properties.push(readProp(t));
    tables.push({ tableId, name, metadataMatch, metadataWrite, config, maxEntries, properties });
  }
  return tables;
}

export function writeTableFeatures(w: OfWriter, tables: TableFeatures[]): void {
  for (const t of tables) {
    const start = w.offset;
    w.u16(0).u8(t.tableId).zeros(5);
    writeFixedString(w, t.name, OFP_MAX_TABLE_NAME_LEN);
    putU64(w, t.metadataMatch);
    putU64(w, t.metadataWrite);
    w.u32(t.config).u32(t.maxEntries);
    for (const p of t.properties) writeProp(w, p);
    w.patchU16(start, w.offset - start);
  }
}
