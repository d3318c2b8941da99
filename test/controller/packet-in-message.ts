import type { PacketIn } from '../../southbound/openflow/codec/messages.js';

/**
 * A PACKET_IN as OVS sends one for a flow's controller action (reason ACTION, no buffer): from
 * the flow in `tableId` with `cookie`, the frame in full, and the match OVS adds: `in_port` and
 * the network's VNI in `metadata` unless `match` is given.
 */
export const packetInMessage = (
  data: Buffer,
  s: { tableId: number; cookie: bigint; port: number; vni?: number; match?: PacketIn['match'] },
): PacketIn => ({
  type: 'PACKET_IN',
  xid: 0,
  bufferId: 0xffffffff,
  totalLen: data.length,
  reason: 1,
  tableId: s.tableId,
  cookie: s.cookie,
  match: s.match ?? [
    { field: 'in_port', value: s.port },
    { field: 'metadata', value: BigInt(s.vni ?? 100) },
  ],
  data,
});
