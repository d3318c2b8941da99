import net from 'node:net';
import {
  decodeMessage,
  encodeMessage,
  OfpFramer,
  type OfpMessage,
} from '../../../../southbound/openflow/codec/index.js';

/**
 * A scripted OpenFlow 1.3 switch over a real socket, written with the codec: by default it
 * completes the handshake like OVS; tests switch off parts of its behaviour to play a bad peer.
 */
export interface FakeSwitchOptions {
  dpid?: bigint;
  /** Send our HELLO at connect (default true). */
  hello?: boolean | Buffer;
  answerEchoes?: boolean;
  /** Override replies; return undefined for the default answer, null for none. */
  reply?: (msg: OfpMessage, sw: FakeSwitch) => OfpMessage[] | null | undefined;
  /** Split PORT_DESC replies this many ways with REPLY_MORE. */
  ports?: number;
}

export class FakeSwitch {
  readonly received: OfpMessage[] = [];
  readonly socket: net.Socket;
  closed: Promise<void>;
  #framer = new OfpFramer();

  /** `to`: a unix socket path, or an already opened socket (e.g. a TLS client). */
  constructor(
    to: string | net.Socket,
    readonly opts: FakeSwitchOptions = {},
  ) {
    this.socket = typeof to === 'string' ? net.connect(to) : to;
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk) => {
      try {
        for (const frame of this.#framer.push(chunk)) this.#onMessage(decodeMessage(frame));
      } catch {
        this.socket.destroy();
      }
    });
    const hello = opts.hello ?? true;
    if (hello === true)
      this.send({ type: 'HELLO', xid: 1, elements: [{ kind: 'versionbitmap', bitmaps: [1 << 4] }] });
    else if (Buffer.isBuffer(hello)) this.socket.write(hello);
  }

  send(msg: OfpMessage): void {
    this.socket.write(encodeMessage(msg));
  }

  waitFor(pred: (m: OfpMessage) => boolean, timeoutMs = 5000): Promise<OfpMessage> {
    const found = this.received.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        const m = this.received.find(pred);
        if (m) {
          clearInterval(poll);
          resolve(m);
        } else if (Date.now() - started > timeoutMs) {
          clearInterval(poll);
          reject(new Error('fake switch: expected message never came'));
        }
      }, 5);
    });
  }

  #onMessage(msg: OfpMessage): void {
    this.received.push(msg);
    const custom = this.opts.reply?.(msg, this);
    if (custom === null) return;
    for (const m of custom ?? this.#defaultReply(msg)) this.send(m);
  }

  #defaultReply(msg: OfpMessage): OfpMessage[] {
    const xid = msg.xid;
    switch (msg.type) {
      case 'FEATURES_REQUEST':
        return [
          {
            type: 'FEATURES_REPLY',
            xid,
            datapathId: this.opts.dpid ?? 0x1234n,
            nBuffers: 0,
            nTables: 254,
            auxiliaryId: 0,
            capabilities: 0x4f,
            reserved: 0,
          },
        ];
      case 'MULTIPART_REQUEST':
        if (msg.body.kind === 'PORT_DESC') {
          const n = this.opts.ports ?? 1;
          return Array.from({ length: n }, (_, i) => ({
            type: 'MULTIPART_REPLY' as const,
            xid,
            flags: i < n - 1 ? 1 : 0,
            body: { kind: 'PORT_DESC' as const, ports: [port(i + 1)] },
          }));
        }
        return [];
      case 'BARRIER_REQUEST':
        return [{ type: 'BARRIER_REPLY', xid }];
      case 'ECHO_REQUEST':
        return this.opts.answerEchoes === false ? [] : [{ type: 'ECHO_REPLY', xid, data: msg.data }];
      default:
        return [];
    }
  }
}

export const port = (portNo: number): import('../../../../southbound/openflow/codec/index.js').PortDesc => ({
  portNo,
  hwAddr: '02:00:00:00:00:01',
  name: `p${portNo}`,
  config: 0,
  state: 4,
  curr: 0,
  advertised: 0,
  supported: 0,
  peer: 0,
  currSpeed: 0,
  maxSpeed: 0,
});

/** pino destination that keeps parsed lines for assertions. */
export function logSink(): { write(line: string): void; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
}
