import type { VswitchState } from './state.js';

/**
 * A VM/container port as the hypervisor's plumbing (libvirt, OpenStack, Kubernetes CNI) declares
 * it: an Interface with `external_ids:iface-id` (the logical port) and `attached-mac`, which
 * ovs-vswitchd has given an OpenFlow port number.
 */
export interface PortBinding {
  ifaceId: string;
  mac: string | undefined;
  ofport: number;
  interfaceName: string;
  interfaceUuid: string;
  /** Interface type, e.g. "" (system), "internal", "dpdkvhostuser", "dpdkvhostuserclient". */
  type: string;
  bridge: string | undefined;
}

export type BindingEvent =
  | { kind: 'bind'; binding: PortBinding }
  | { kind: 'unbind'; binding: PortBinding }
  | { kind: 'move'; binding: PortBinding; from: PortBinding };

/**
 * Every bound logical port of a chassis. An interface counts only once vswitchd has given it a
 * usable ofport (> 0): before that, flows could not name it. If two interfaces claim the same
 * iface-id (a VM being re-plugged), the one with the higher ofport wins, deterministically.
 */
export function computeBindings(state: VswitchState): Map<string, PortBinding> {
  const bridgeOfIface = new Map<string, string>();
  for (const br of state.bridges.values()) {
    for (const pu of br.ports) {
      const port = state.ports.get(pu);
      if (port) for (const iu of port.interfaces) bridgeOfIface.set(iu, br.name);
    }
  }
  const out = new Map<string, PortBinding>();
  for (const iface of state.interfaces.values()) {
    const ifaceId = iface.external_ids.get('iface-id');
    const ofport = iface.ofport;
    if (!ifaceId || ofport === null || ofport <= 0) continue;
    const prev = out.get(ifaceId);
    if (prev && prev.ofport > ofport) continue;
    out.set(ifaceId, {
      ifaceId,
      mac: iface.external_ids.get('attached-mac') ?? undefined,
      ofport,
      interfaceName: iface.name,
      interfaceUuid: iface._uuid,
      type: iface.type,
      bridge: bridgeOfIface.get(iface._uuid),
    });
  }
  return out;
}

const sameBinding = (a: PortBinding, b: PortBinding) =>
  a.ofport === b.ofport &&
  a.mac === b.mac &&
  a.interfaceUuid === b.interfaceUuid &&
  a.interfaceName === b.interfaceName &&
  a.bridge === b.bridge &&
  a.type === b.type;

/** Events turning `prev` into `next`: new iface-ids bind, vanished ones unbind, changed ones move. */
export function diffBindings(
  prev: ReadonlyMap<string, PortBinding>,
  next: ReadonlyMap<string, PortBinding>,
): BindingEvent[] {
  const events: BindingEvent[] = [];
  for (const [id, b] of prev) if (!next.has(id)) events.push({ kind: 'unbind', binding: b });
  for (const [id, b] of next) {
    const old = prev.get(id);
    if (!old) events.push({ kind: 'bind', binding: b });
    else if (!sameBinding(old, b)) events.push({ kind: 'move', binding: b, from: old });
  }
  return events;
}
