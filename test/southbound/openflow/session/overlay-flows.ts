import type { OfpMessage } from '../../../../southbound/openflow/codec/index.js';

/**
 * Distinct overlay flows like the tenant pipeline installs: metadata (tenant) + destination MAC
 * -> tunnel destination, VNI, output to the VXLAN port. The same flows as objects (for weft) and as
 * ovs-ofctl text (for the baseline), so both sides install identical tables.
 */
export interface OverlayFlow {
  tenant: number;
  mac: string;
  tunDst: string;
}

export function overlayFlow(i: number): OverlayFlow {
  const tenant = 1 + Math.floor(i / 50_000);
  const n = i % 50_000;
  const mac = `02:00:00:${hex2((n >> 16) & 0xff)}:${hex2((n >> 8) & 0xff)}:${hex2(n & 0xff)}`;
  const tunDst = `10.${(n >> 16) & 0xff}.${(n >> 8) & 0xff}.${n & 0xff || 1}`;
  return { tenant, mac, tunDst };
}

export function overlayFlowMod(i: number, tableId = 20): OfpMessage {
  const f = overlayFlow(i);
  return {
    type: 'FLOW_MOD',
    xid: 0,
    command: 0,
    tableId,
    priority: 100,
    match: [
      { field: 'metadata', value: BigInt(f.tenant) },
      { field: 'eth_dst', value: f.mac },
    ],
    instructions: [
      {
        type: 'apply_actions',
        actions: [
          { type: 'set_field', field: 'tun_dst', value: f.tunDst },
          { type: 'set_field', field: 'tun_id', value: BigInt(f.tenant) },
          { type: 'output', port: 100, maxLen: 0 },
        ],
      },
    ],
  };
}

export function overlayFlowText(i: number, tableId = 20): string {
  const f = overlayFlow(i);
  return `table=${tableId},priority=100,metadata=0x${f.tenant.toString(16)},dl_dst=${f.mac},actions=set_field:${f.tunDst}->tun_dst,set_field:0x${f.tenant.toString(16)}->tun_id,output:100`;
}

const hex2 = (n: number) => n.toString(16).padStart(2, '0');
