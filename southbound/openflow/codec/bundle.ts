import { ONF_EXPERIMENTER_ID, onfEt } from './constants.js';
import type { BundleAdd, BundleControl, OfpMessage, RoleStatus } from './messages.js';
import { pad8, putU64, readProperties, writeProperties } from './msg-common.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * The ONF extensions OVS speaks on OpenFlow 1.3, carried in EXPERIMENTER messages with
 * experimenter 0x4f4e4600 (ONF): bundle control (2300), bundle add-message (2301), role status
 * (1911). Their bodies are the OpenFlow 1.4 structures (ofp14_bundle_ctrl_msg, ofp14_role_status).
 * The inner message of an add is (de)coded by the caller's functions so this file has no import
 * cycle with decode.ts/encode.ts.
 */

export type InnerDecoder = (buf: Buffer, at: number, end: number) => OfpMessage;
export type InnerEncoder = (w: OfWriter, msg: OfpMessage) => void;

/** Whether an EXPERIMENTER message body is one of the ONF messages modelled here. */
export function isOnfModelled(experimenter: number, expType: number): boolean {
  return (
    experimenter === ONF_EXPERIMENTER_ID &&
    (expType === onfEt.BUNDLE_CONTROL ||
      expType === onfEt.BUNDLE_ADD_MESSAGE ||
      expType === onfEt.ROLE_STATUS)
  );
}

/** Decodes the body after experimenter/exp_type of a modelled ONF message. */
export function decodeOnf(r: OfReader, xid: number, expType: number, inner: InnerDecoder): OfpMessage {
  if (expType === onfEt.ROLE_STATUS) {
    r.context = 'ROLE_STATUS';
    const role = r.u32('role');
    const reason = r.u8('reason');
    r.pad(3);
    const generationId = r.u64('generation_id');
    return {
      type: 'ROLE_STATUS',
      xid,
      role,
      reason,
      generationId,
      properties: readProperties(r, 'property'),
    };
  }
  const isAdd = expType === onfEt.BUNDLE_ADD_MESSAGE;
  r.context = isAdd ? 'BUNDLE_ADD' : 'BUNDLE_CONTROL';
  const bundleId = r.u32('bundle_id');
  if (!isAdd) {
    const ctrlType = r.u16('type');
    const flags = r.u16('flags');
    return {
      type: 'BUNDLE_CONTROL',
      xid,
      bundleId,
      ctrlType,
      flags,
      properties: readProperties(r, 'property'),
    } satisfies BundleControl;
  }
  r.pad(2, 'bundle add pad');
  const flags = r.u16('flags');
  r.need(8, 'inner message header');
  const at = r.offset;
  const innerLen = r.buf.readUInt16BE(at + 2);
  if (innerLen < 8 || innerLen > r.remaining) {
    r.fail(
      'bad-length',
      `inner message length ${innerLen} does not fit the ${r.remaining} bytes left`,
      at + 2,
    );
  }
  const message = inner(r.buf, at, at + innerLen);
  r.offset = at + innerLen;
  if (r.remaining > 0) {
    // Padding to 8 only precedes properties; padding with nothing after it could not be re-encoded.
    r.pad(pad8(innerLen), 'inner message padding');
    if (r.remaining === 0) r.fail('bad-length', 'padding after the inner message but no properties');
  }
  return {
    type: 'BUNDLE_ADD',
    xid,
    bundleId,
    flags,
    message,
    properties: readProperties(r, 'property'),
  } satisfies BundleAdd;
}

export function encodeOnf(w: OfWriter, m: BundleControl | BundleAdd | RoleStatus, inner: InnerEncoder): void {
  w.u32(ONF_EXPERIMENTER_ID);
  if (m.type === 'ROLE_STATUS') {
    w.u32(onfEt.ROLE_STATUS).u32(m.role).u8(m.reason).zeros(3);
    putU64(w, m.generationId);
  } else if (m.type === 'BUNDLE_CONTROL') {
    w.u32(onfEt.BUNDLE_CONTROL).u32(m.bundleId).u16(m.ctrlType).u16(m.flags);
  } else {
    w.u32(onfEt.BUNDLE_ADD_MESSAGE).u32(m.bundleId).u16(0).u16(m.flags);
    const start = w.offset;
    if (m.message.type === 'ENCODED') {
      w.bytes(m.message.bytes);
      w.buf.writeUInt32BE(m.message.xid >>> 0, start + 4);
    } else inner(w, m.message);
    if (m.properties.length > 0) w.zeros(pad8(w.offset - start));
  }
  writeProperties(w, m.properties);
}
