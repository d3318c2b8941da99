import type { OfpMessage } from '../codec/index.js';
import type { OfpErrorReply } from './session-errors.js';

/** Messages sent without their own promise, whose ERRORs are gathered until a barrier confirms them. */
export interface Batch {
  firstXid: number;
  messages: OfpMessage[];
  errors: OfpErrorReply<OfpMessage>[];
}

/**
 * The batches of a session still waiting for their barrier (SwitchSession.sendConfirmed): an
 * ERROR whose xid falls in one belongs to it, and names the message it was about.
 */
export class OpenBatches {
  readonly #open: Batch[] = [];

  open(firstXid: number, messages: OfpMessage[]): Batch {
    const batch: Batch = { firstXid, messages, errors: [] };
    this.#open.push(batch);
    return batch;
  }

  close(batch: Batch): void {
    const i = this.#open.indexOf(batch);
    if (i >= 0) this.#open.splice(i, 1);
  }

  of(xid: number): Batch | undefined {
    return this.#open.find((b) => xid >= b.firstXid && xid < b.firstXid + b.messages.length);
  }

  /** The message sent with this xid in an open batch (with its xid set), if any. */
  messageOf(xid: number): OfpMessage | undefined {
    const b = this.of(xid);
    const m = b?.messages[xid - b.firstXid];
    return m ? ({ ...m, xid } as OfpMessage) : undefined;
  }
}
