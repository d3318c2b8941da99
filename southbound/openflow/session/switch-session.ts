import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  decodeMessage,
  type ErrorMessage,
  encodeMessage,
  type FeaturesReply,
  type MultipartReplyBody,
  type MultipartRequestBody,
  OfpCodecError,
  OfpFramer,
  type OfpMessage,
  ofppr,
  type PortDesc,
} from '../codec/index.js';
import { OpenBatches } from './batches.js';
import { encodeChunks } from './chunked-encoder.js';
import { EchoProbe } from './echo-probe.js';
import { formatDpid, type RoleChange, type RoleName, type SessionEvents } from './events.js';
import { FloodGuard } from './flood-guard.js';
import { askSwitchFacts, helloFailed, helloMessage, roleName } from './handshake.js';
import { negotiateHello, takeFirstMessage } from './hello.js';
import { Inbox } from './inbox.js';
import type { SessionOptions } from './options.js';
import { RawReplies } from './raw-replies.js';
import { errorReply, expectType } from './replies.js';
import { RequestTable } from './request-table.js';
import { type OfpErrorReply, SessionClosedError } from './session-errors.js';
import { TypedEmitter } from './typed-emitter.js';
import { WriteQueue } from './write-queue.js';

const ECHO_REQUEST_TYPE = 2;
/** Offered to a raw multipart request's entry once its last reply frame was handled. */
const RAW_DONE: OfpMessage = Object.freeze({ type: 'BARRIER_REPLY', xid: 0 });

export type SessionState = 'hello' | 'handshake' | 'up' | 'closed';

/**
 * One OpenFlow 1.3 connection to a switch: handshake, liveness, requests and events.
 * All bytes go through the codec; all writes through the bounded WriteQueue. A bad peer is closed
 * with exactly one log line (`close(reason)`), and nothing it does reaches other sessions.
 */
export class SwitchSession extends TypedEmitter<SessionEvents> {
  state: SessionState = 'hello';
  features: FeaturesReply | null = null;
  readonly ports = new Map<number, PortDesc>();
  role: RoleName = 'equal';
  generationId: bigint | null = null;
  /** Counters for logs, metrics and tests. */
  readonly stats = { packetInShed: 0, packetIn: 0, messagesIn: 0, unsolicitedErrors: 0 };
  closeReason: string | null = null;

  readonly #requests = new RequestTable<OfpMessage>((r) => r.type);
  readonly #batches = new OpenBatches();
  readonly #raw = new RawReplies();
  readonly #queue: WriteQueue;
  readonly #framer: OfpFramer;
  readonly #inbox: Inbox;
  readonly #packetIns: FloodGuard;
  #pre: Buffer | null = Buffer.alloc(0);
  readonly #echo: EchoProbe;
  #helloTimer: NodeJS.Timeout | null = null;
  log: Logger;

  constructor(
    private readonly socket: Socket,
    readonly peer: string,
    readonly options: SessionOptions,
    log: Logger,
  ) {
    super();
    this.log = log.child({ peer });
    this.#framer = new OfpFramer({ maxMessageBytes: options.maxMessageBytes });
    this.#packetIns = new FloodGuard(
      'packet-in',
      options.packetInRate,
      options.packetInBurst,
      () => this.log,
    );
    this.#queue = new WriteQueue(socket, {
      maxBytes: options.writeQueueBytes,
      stallMs: options.writeStallMs,
      onStall: () => this.close(`write queue stuck for ${options.writeStallMs} ms (switch not reading)`),
    });
    socket.setNoDelay?.(true);
    this.#echo = new EchoProbe(
      options.echoIntervalMs,
      options.echoMisses,
      () =>
        this.#queue.urgent(
          encodeMessage({ type: 'ECHO_REQUEST', xid: this.#requests.allocate(), data: Buffer.alloc(0) }),
        ),
      (reason) => this.close(reason),
    );
    this.#inbox = new Inbox({
      handle: (frame) => {
        if (this.#closed()) return;
        if (this.#raw.route(frame)) this.stats.messagesIn++;
        else this.#dispatch(decodeMessage(frame));
      },
      fail: (err) => this.#failInput(err),
      pause: () => socket.pause(),
      resume: () => socket.resume(),
    });
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.close(`socket error: ${err.message}`, { quiet: isReset(err) }));
    socket.on('close', () => this.close('connection closed by switch', { quiet: true }));
    this.#helloTimer = setTimeout(
      () => this.close(`no OpenFlow handshake within ${options.helloTimeoutMs} ms`),
      options.helloTimeoutMs,
    );
    this.#helloTimer.unref();
    this.#write(helloMessage(this.#requests.allocate()));
  }

  get datapathId(): bigint | null {
    return this.features?.datapathId ?? null;
  }

  get dpid(): string | null {
    return this.features ? formatDpid(this.features.datapathId) : null;
  }

  get queuedBytes(): number {
    return this.#queue.queuedBytes;
  }

  get pendingRequests(): number {
    return this.#requests.size;
  }

  // ---- sending -------------------------------------------------------------------------------

  /**
   * Sends one message with a fresh xid (returned). Resolves at once unless the write queue is full,
   * then once it has room: `await` it to respect backpressure. ERRORs it causes are emitted.
   */
  send(msg: OfpMessage): number | Promise<number> {
    const xid = this.#requests.allocate();
    const wait = this.#write({ ...msg, xid } as OfpMessage);
    return wait ? wait.then(() => xid) : xid;
  }

  /** Sends a request and waits for its answer; `accept` picks it out (default: the first reply). */
  request<T = OfpMessage>(
    msg: OfpMessage,
    accept: (reply: OfpMessage) => { done: true; value: T } | { done: false } = (r) => ({
      done: true,
      value: r as T,
    }),
    timeoutMs = this.options.requestTimeoutMs,
  ): Promise<T> {
    if (this.state === 'closed') return Promise.reject(this.#closedError());
    const xid = this.#requests.allocate();
    const sent = { ...msg, xid } as OfpMessage;
    const answer = this.#requests.track(xid, sent, timeoutMs, accept);
    const wait = this.#write(sent);
    if (wait) wait.catch(() => undefined); // failure reaches `answer` through failAll
    return answer;
  }

  barrier(): Promise<void> {
    return this.request(
      { type: 'BARRIER_REQUEST', xid: 0 },
      expectType('BARRIER_REPLY', () => undefined),
    );
  }

  /** A multipart request; the replies flagged REPLY_MORE are gathered into one list of bodies. */
  multipart(body: MultipartRequestBody, timeoutMs?: number): Promise<MultipartReplyBody[]> {
    const bodies: MultipartReplyBody[] = [];
    return this.request<MultipartReplyBody[]>(
      { type: 'MULTIPART_REQUEST', xid: 0, flags: 0, body },
      (r) => {
        if (r.type !== 'MULTIPART_REPLY') throw new Error(`expected MULTIPART_REPLY, got ${r.type}`);
        bodies.push(r.body);
        return r.flags & 1 ? { done: false } : { done: true, value: bodies };
      },
      timeoutMs,
    );
  }

  /**
   * A multipart request whose replies are handed to `onReply` as whole frames, undecoded (see
   * raw-replies.ts); resolves after the last one was handled. An exception from `onReply` (a
   * malformed reply) closes the session like any malformed input, failing this request.
   */
  multipartRaw(
    body: MultipartRequestBody,
    onReply: (frame: Buffer, last: boolean) => void,
    timeoutMs = this.options.requestTimeoutMs,
  ): Promise<void> {
    if (this.state === 'closed') return Promise.reject(this.#closedError());
    const xid = this.#requests.allocate();
    const sent: OfpMessage = { type: 'MULTIPART_REQUEST', xid, flags: 0, body };
    const answer = this.#requests.track<void>(xid, sent, timeoutMs, (r) => {
      if (r === RAW_DONE) return { done: true, value: undefined };
      throw new Error(`expected MULTIPART_REPLY, got ${r.type}`);
    });
    this.#raw.add(xid, (frame, last) => {
      onReply(frame, last);
      if (last) this.#requests.offer(xid, RAW_DONE);
    });
    const forget = () => this.#raw.delete(xid);
    answer.then(forget, forget);
    const wait = this.#write(sent);
    if (wait) wait.catch(() => undefined); // failure reaches `answer` through failAll
    return answer;
  }

  /**
   * Sends every message (fast: batched writes, one xid range), then a barrier. Resolves with the
   * ERRORs the switch raised for any of them, each carrying its offending message; empty = all applied.
   */
  async sendConfirmed(
    messages: OfpMessage[],
    opts: { timeoutMs?: number; withXid?: (m: OfpMessage, xid: number) => OfpMessage } = {},
  ): Promise<OfpErrorReply<OfpMessage>[]> {
    const withXid = opts.withXid ?? ((m, xid) => ({ ...m, xid }) as OfpMessage);
    if (this.state === 'closed') throw this.#closedError();
    const firstXid = this.#requests.allocate(messages.length);
    const batch = this.#batches.open(firstXid, messages);
    try {
      for (const chunk of encodeChunks(messages, firstXid, withXid)) {
        const wait = this.#queue.write(chunk);
        if (wait) await wait;
      }
      await this.request(
        { type: 'BARRIER_REQUEST', xid: 0 },
        expectType('BARRIER_REPLY', () => undefined),
        opts.timeoutMs,
      );
      return batch.errors;
    } finally {
      this.#batches.close(batch);
    }
  }

  // ---- closing -------------------------------------------------------------------------------

  /**
   * Closes the connection once, logging one line with the peer, dpid and reason (warn for bad
   * peers, info for a normal disconnect) and failing everything pending.
   */
  close(reason: string, opts: { quiet?: boolean } = {}): void {
    if (this.state === 'closed') return;
    const wasUp = this.state === 'up';
    this.state = 'closed';
    this.closeReason = reason;
    if (this.#helloTimer) clearTimeout(this.#helloTimer);
    this.#echo.stop();
    // Once up, the session's logger names the dpid already (one key per line, not two).
    const fields = wasUp ? { reason } : { dpid: this.dpid ?? undefined, reason };
    if (opts.quiet) this.log.info(fields, 'switch disconnected');
    else this.log.warn(fields, 'switch session closed');
    const err = new SessionClosedError(this.peer, reason);
    this.#queue.close(err, { flush: true });
    this.#inbox.close();
    this.#requests.failAll(err);
    // Let queued bytes (e.g. HELLO_FAILED) reach the peer before the socket goes.
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    if (wasUp) this.emit('down', reason);
  }

  // ---- internals -----------------------------------------------------------------------------

  #write(msg: OfpMessage): Promise<void> | undefined {
    return this.#queue.write(encodeMessage(msg));
  }

  /** A method, not a field test, so TypeScript does not narrow `state` across calls that close. */
  #closed(): boolean {
    return this.state === 'closed';
  }

  #closedError(): SessionClosedError {
    return new SessionClosedError(this.peer, this.closeReason ?? 'closed');
  }

  #onData(chunk: Buffer): void {
    if (this.state === 'closed') return;
    this.#echo.heard();
    try {
      if (this.#pre) {
        chunk = this.#takeHello(chunk);
        if (this.#pre || this.#closed()) return;
      }
      for (const frame of this.#framer.push(chunk)) {
        // Echo requests skip the inbox: liveness answers never wait behind a big backlog.
        if (frame[1] === ECHO_REQUEST_TYPE) this.#dispatch(decodeMessage(frame));
        else this.#inbox.push(frame);
      }
    } catch (err) {
      this.#failInput(err);
    }
  }

  #failInput(err: unknown): void {
    if (err instanceof OfpCodecError) this.close(`malformed OpenFlow from switch: ${err.message}`);
    else this.close(`internal error handling switch message: ${(err as Error).stack ?? String(err)}`);
  }

  /**
   * The first message is read raw (see hello.ts): returns the bytes after it, or an empty buffer
   * while it is still incomplete (`#pre` stays set).
   */
  #takeHello(chunk: Buffer): Buffer {
    const buf = this.#pre!.length ? Buffer.concat([this.#pre!, chunk]) : chunk;
    const first = takeFirstMessage(buf, this.options.maxMessageBytes);
    if (first.kind === 'incomplete') {
      this.#pre = buf;
      return Buffer.alloc(0);
    }
    this.#pre = null;
    if (first.kind === 'garbage') {
      this.close(first.reason);
      return Buffer.alloc(0);
    }
    const verdict = negotiateHello(first.frame);
    if (!verdict.ok) {
      if (!('notHello' in verdict)) this.#write(helloFailed(first.frame.readUInt32BE(4), verdict.reason));
      this.close(verdict.reason);
      return Buffer.alloc(0);
    }
    this.state = 'handshake';
    void this.#handshake();
    return first.rest;
  }

  /** The rest of the handshake (handshake.ts), then the session is up. */
  async #handshake(): Promise<void> {
    try {
      const facts = await askSwitchFacts(this);
      this.features = facts.features;
      for (const p of facts.ports) this.ports.set(p.portNo, p);
    } catch (err) {
      this.close(`handshake failed: ${(err as Error).message}`);
      return;
    }
    if (this.state !== 'handshake') return;
    if (this.#helloTimer) clearTimeout(this.#helloTimer);
    this.state = 'up';
    this.log = this.log.child({ dpid: this.dpid });
    this.#echo.start();
    this.emit('up');
  }

  #dispatch(msg: OfpMessage): void {
    this.stats.messagesIn++;
    switch (msg.type) {
      case 'ECHO_REQUEST':
        this.#queue.urgent(encodeMessage({ type: 'ECHO_REPLY', xid: msg.xid, data: msg.data }));
        return;
      case 'ERROR':
        this.#onError(msg);
        return;
      case 'PACKET_IN':
        if (this.#packetIns.admit()) {
          this.stats.packetIn++;
          this.emit('packet-in', msg);
        } else this.stats.packetInShed++;
        return;
      case 'PORT_STATUS': {
        const change =
          msg.reason === ofppr.ADD ? 'added' : msg.reason === ofppr.DELETE ? 'removed' : 'changed';
        if (change === 'removed') this.ports.delete(msg.port.portNo);
        else this.ports.set(msg.port.portNo, msg.port);
        this.emit('port', change, msg.port);
        return;
      }
      case 'FLOW_REMOVED':
        this.emit('flow-removed', msg);
        return;
      case 'ROLE_STATUS':
        this.#setRole({ role: roleName(msg.role), generationId: msg.generationId, cause: 'role-status' });
        return;
      case 'HELLO':
        return;
      default:
        if (!this.#requests.offer(msg.xid, msg) && msg.type !== 'ECHO_REPLY') {
          this.log.debug({ type: msg.type, xid: msg.xid }, 'unsolicited message ignored');
        }
    }
  }

  /** Role bookkeeping shared by replies, role-status and STALE refusals. */
  #setRole(change: RoleChange): void {
    if (change.cause !== 'stale') {
      this.role = change.role;
      this.generationId = change.generationId;
    }
    this.log.info(
      { role: change.role, generationId: String(change.generationId), cause: change.cause },
      'role change',
    );
    this.emit('role', change);
  }

  /** Called by operations.ts when a ROLE_REPLY or STALE answer arrives. */
  noteRole(change: RoleChange): void {
    this.#setRole(change);
  }

  #onError(msg: ErrorMessage): void {
    const err = errorReply(msg, this.#requests.requestOf(msg.xid) ?? this.#batches.messageOf(msg.xid));
    if (this.#requests.fail(msg.xid, err)) return;
    const batch = this.#batches.of(msg.xid);
    if (batch) {
      batch.errors.push(err);
      return;
    }
    this.stats.unsolicitedErrors++;
    this.log.warn({ xid: msg.xid, error: `${err.typeName}/${err.codeName}` }, 'switch reported an error');
    this.emit('error', err);
  }
}

const isReset = (err: NodeJS.ErrnoException) => err.code === 'ECONNRESET' || err.code === 'EPIPE';
