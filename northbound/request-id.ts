import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Client-supplied ids are echoed only when short and plain, so they cannot forge log lines. */
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id: the caller's `x-request-id` when sane (tracing across hops), else a fresh UUID. */
export const requestIdOf = (req: IncomingMessage): string => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && acceptable.test(given) ? given : randomUUID();
};
