import type { FlowRemoved, PacketIn, PortDesc } from '../codec/index.js';
import { formatDpid, type PortChange, type RoleChange } from './events.js';
import type { OfpErrorReply } from './session-errors.js';
import type { SwitchSession } from './switch-session.js';
import { TypedEmitter } from './typed-emitter.js';

export interface RegistryEvents {
  [event: string]: unknown[];
  'switch-up': [sw: SwitchSession];
  'switch-down': [sw: SwitchSession, reason: string];
  port: [sw: SwitchSession, change: PortChange, port: PortDesc];
  'packet-in': [sw: SwitchSession, msg: PacketIn];
  'flow-removed': [sw: SwitchSession, msg: FlowRemoved];
  role: [sw: SwitchSession, change: RoleChange];
  error: [sw: SwitchSession, err: OfpErrorReply];
}

/**
 * The connected switches, by datapath id, and one stream of their events: what the rest of the
 * controller (apps, API, HA) queries and subscribes to. Only sessions past the handshake are here.
 */
export class SwitchRegistry extends TypedEmitter<RegistryEvents> {
  readonly #byDpid = new Map<string, SwitchSession>();

  /** Sessions call this once up; a second connection for the same dpid replaces the first. */
  add(sw: SwitchSession): void {
    const dpid = sw.dpid;
    if (!dpid) throw new Error(`session ${sw.peer} has no datapath id yet`);
    const old = this.#byDpid.get(dpid);
    if (old && old !== sw) old.close(`replaced by a new connection from ${sw.peer}`, { quiet: true });
    this.#byDpid.set(dpid, sw);
    sw.on('down', (reason) => {
      if (this.#byDpid.get(dpid) === sw) this.#byDpid.delete(dpid);
      this.emit('switch-down', sw, reason);
    });
    sw.on('port', (change, port) => this.emit('port', sw, change, port));
    sw.on('packet-in', (msg) => this.emit('packet-in', sw, msg));
    sw.on('flow-removed', (msg) => this.emit('flow-removed', sw, msg));
    sw.on('role', (change) => this.emit('role', sw, change));
    sw.on('error', (err) => this.emit('error', sw, err));
    this.emit('switch-up', sw);
  }

  get(dpid: string | bigint): SwitchSession | undefined {
    return this.#byDpid.get(typeof dpid === 'bigint' ? formatDpid(dpid) : normalizeDpid(dpid));
  }

  list(): SwitchSession[] {
    return [...this.#byDpid.values()];
  }

  get size(): number {
    return this.#byDpid.size;
  }

  /** Resolves when the switch is connected (at once if it is); rejects after timeoutMs. */
  waitFor(dpid: string | bigint, timeoutMs = 30_000): Promise<SwitchSession> {
    const key = typeof dpid === 'bigint' ? formatDpid(dpid) : normalizeDpid(dpid);
    const now = this.#byDpid.get(key);
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const onUp = (sw: SwitchSession) => {
        if (sw.dpid !== key) return;
        clearTimeout(timer);
        this.off('switch-up', onUp);
        resolve(sw);
      };
      const timer = setTimeout(() => {
        this.off('switch-up', onUp);
        reject(new Error(`switch ${key} did not connect within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on('switch-up', onUp);
    });
  }
}

/** Accepts `0000aabb...`, `0xaabb...`, `"0000aabb..."` (as ovs-vsctl prints it) or `00:00:aa:...`. */
export function normalizeDpid(text: string): string {
  const hex = text.replace(/^"|"$/g, '').replace(/^0x/i, '').replace(/:/g, '').toLowerCase();
  if (!/^[0-9a-f]{1,16}$/.test(hex)) throw new Error(`'${text}' is not a datapath id`);
  return hex.padStart(16, '0');
}
