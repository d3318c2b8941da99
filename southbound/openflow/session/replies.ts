import { type ErrorMessage, errorName, type OfpMessage } from '../codec/index.js';
import { OfpErrorReply } from './session-errors.js';

/** The variant(s) whose `type` may be K (some variants, like RoleMessage, carry two types). */
export type MessageWithType<K extends string, M = OfpMessage> = M extends { type: infer T }
  ? K extends T
    ? M
    : never
  : never;

/** An accept function (see RequestTable) that wants one reply of the given type. */
export function expectType<K extends OfpMessage['type'], T>(
  type: K,
  map: (m: MessageWithType<K>) => T,
): (m: OfpMessage) => { done: true; value: T } {
  return (m) => {
    if (m.type !== type) throw new Error(`expected ${type}, got ${m.type}`);
    return { done: true, value: map(m as MessageWithType<K>) };
  };
}

/** The typed rejection for an ERROR from the switch, with names from the codec's tables. */
export function errorReply(msg: ErrorMessage, request: OfpMessage | undefined): OfpErrorReply<OfpMessage> {
  const name = errorName(msg.errType, msg.code, msg.experimenter);
  const slash = name.indexOf('/');
  const typeName = slash < 0 ? name : name.slice(0, slash);
  const codeName = slash < 0 ? '' : name.slice(slash + 1);
  return new OfpErrorReply(msg.errType, msg.code, typeName, codeName, request, msg.data, msg.xid);
}
