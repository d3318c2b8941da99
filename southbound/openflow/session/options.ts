/** Knobs of one switch session; `weft serve` flags and WEFT_* variables map onto these. */
export interface SessionOptions {
  /** Send ECHO_REQUEST after this long without hearing from the switch. */
  echoIntervalMs: number;
  /** Disconnect after this many echo intervals in a row pass with no reply. */
  echoMisses: number;
  /** A peer that has not sent HELLO (and finished the handshake) by then is dropped. */
  helloTimeoutMs: number;
  /** Default deadline of a request (barrier, multipart, role, ...). */
  requestTimeoutMs: number;
  /** Cap on one OpenFlow message from the switch; bigger length fields close the session. */
  maxMessageBytes: number;
  /** Bytes allowed queued towards one switch (ours + the socket's); writers wait beyond that. */
  writeQueueBytes: number;
  /** A writer blocked on a full queue for this long means the switch is stuck: close it. */
  writeStallMs: number;
  /** Token bucket for PACKET_IN per switch: sustained rate and burst; excess is shed and counted. */
  packetInRate: number;
  packetInBurst: number;
}

export const defaultSessionOptions: SessionOptions = {
  echoIntervalMs: 5_000,
  echoMisses: 3,
  helloTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxMessageBytes: 65_535,
  writeQueueBytes: 16 * 1024 * 1024,
  writeStallMs: 30_000,
  packetInRate: 1_000,
  packetInBurst: 2_000,
};
