/**
 * The OpenFlow 1.3 codec's public API. Sessions, apps and the CLI import only this module.
 *
 *   const framer = new OfpFramer();
 *   for (const frame of framer.push(chunk)) handle(decodeMessage(frame));
 *   socket.write(encodeMessage({ type: 'BARRIER_REQUEST', xid: 7 }));
 *
 * Every decode failure is an OfpCodecError (kind, context, offset, reason).
 */

export type { Action } from './actions.js';
export type { Bucket } from './buckets.js';
export * from './constants.js';
export { decodeMessage } from './decode.js';
export { encodeInto, encodeMessage } from './encode.js';
export * from './errors.js';
export { DumpedFlow, decodeFlowDump, decodeFlowDumpReply } from './flow-dump.js';
export { OfpFramer, type OfpFramerOptions } from './framing.js';
export { msgTypeName, type OfpHeader, readHeader } from './header.js';
export type { Instruction } from './instructions.js';
export {
  messageFromJson,
  messageToJson,
  parseCodecJson,
  stringifyCodecJson,
  toJsonValue,
} from './json.js';
export type { Match, OxmTlv, OxmValue } from './match.js';
export type * from './messages.js';
export { helloVersions, versionBitmap } from './msg-basic.js';
export type * from './multipart-types.js';
export {
  type CtFlushFilter,
  type CtTupleFilter,
  ctFlush,
  ctFlushOf,
  ctFlushZone,
  ctFlushZoneOf,
  NXT_CT_FLUSH,
  NXT_CT_FLUSH_ZONE,
} from './nx-ct-flush.js';
export { OfReader } from './reader.js';
export { OfWriter } from './writer.js';
