import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { IdSchema } from '../../controller/intent/model-base.js';
import type { SgLogBook, SgLogPage, SgLogQuery } from '../../controller/sg-log/sg-log-book.js';
import { errorResponses } from '../errors.js';
import { whileOpen } from '../long-poll.js';
import { tenantScope } from '../principal.js';
import { parseLongPoll } from '../write-options.js';

const description = [
  'What the security groups that ask for it (`log`: denied, accepted, all) logged: one entry per',
  "packet their member endpoints' policy dropped (denied) or per new connection a rule admitted",
  '(accepted), as the switches reported them, rate-limited per endpoint on the switch (20 a second,',
  'bursts of 40; what exceeds it is not logged, the traffic is unaffected). The last 10,000, numbered',
  'from 1: with a Redis store kept in Redis and read by both controllers of an HA pair alike (a',
  'takeover or restart keeps them), with the embedded store in memory, numbered per controller',
  "process. Entries after `since`, oldest first; follow it by asking again with `since` set to the answer's",
  '`next`. A `since` past the newest entry (one from before the numbering began again) reads from',
  'the oldest. With `wait`, an answer that would be',
  'empty waits up to that long for an entry. Admin tokens see every entry, a tenant token those of',
  'its tenant. Network ACLs with `log: true` log here too, each packet they match (`networkAclId`),',
  'under the same per-endpoint limit and at most 100 a second per network on each hypervisor.',
].join(' ');

const Verdict = Type.Union([Type.Literal('accepted'), Type.Literal('denied')]);

const Entry = Type.Object(
  {
    seq: Type.Integer({ description: 'position in the log, from 1' }),
    at: Type.String({ description: 'when the controller received it (ISO 8601)' }),
    verdict: Verdict,
    direction: Type.Union([Type.Literal('egress'), Type.Literal('ingress')], {
      description: "the endpoint's point of view: egress it sent the packet, ingress it was to receive it",
    }),
    chassis: Type.String(),
    endpointId: Type.String(),
    tenantId: Type.String(),
    networkId: Type.String(),
    protocol: Type.String({ description: 'tcp, udp, icmp, icmpv6, or the IP protocol number' }),
    src: Type.String(),
    dst: Type.String(),
    srcPort: Type.Optional(Type.Integer()),
    dstPort: Type.Optional(Type.Integer()),
    icmpType: Type.Optional(Type.Integer()),
    icmpCode: Type.Optional(Type.Integer()),
    securityGroupId: Type.Optional(
      Type.String({
        description: 'accepted: the group whose rule admitted it (absent: no rule does any more)',
      }),
    ),
    ruleId: Type.Optional(Type.String({ description: 'accepted: that rule' })),
    networkAclId: Type.Optional(
      Type.String({
        description:
          'logged by a network ACL (its log): the ACL that let it through (accepted) or dropped it (denied)',
      }),
    ),
  },
  { additionalProperties: false, title: 'SecurityGroupLogEntry' },
);

export interface SgLogRouteOptions {
  /** The controller's book; absent (an API without a controller behind it): every page is empty. */
  book?: SgLogBook | undefined;
}

/** GET /v1/security-group-log: the security groups' log (docs/API.md, "Security-group logging"). */
export const sgLogRoutes: FastifyPluginAsyncTypebox<SgLogRouteOptions> = async (app, opts) => {
  app.get(
    '/security-group-log',
    {
      schema: {
        tags: ['security-groups'],
        summary: 'What logging security groups accepted and denied; long-poll to follow it',
        description,
        querystring: Type.Object(
          {
            since: Type.Integer({ minimum: 0, default: 0, description: 'entries after this seq' }),
            limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
            endpoint: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 64,
                pattern: IdSchema.pattern,
                description: "only this endpoint's entries (an id)",
              }),
            ),
            verdict: Type.Optional(Verdict),
            wait: Type.Optional(
              Type.String({ description: 'wait this long for an entry: 500ms, 30s (max 60s)' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              entries: Type.Array(Entry),
              next: Type.Integer({ description: 'ask again with since=next for what follows' }),
              oldest: Type.Integer({ description: 'the oldest seq still kept (0: nothing logged yet)' }),
            },
            { additionalProperties: false },
          ),
          ...errorResponses(400, 401),
        },
      },
    },
    async (req, reply) => {
      const { since, limit, endpoint, verdict } = req.query;
      // Parsed before looking at the book, so a bad wait is refused with or without one.
      const waitMs = parseLongPoll(req.query.wait);
      const book = opts.book;
      if (!book) {
        // Nothing will ever come, but a follower asking with wait must not be answered at once,
        // or it would ask again in a tight loop.
        if (waitMs > 0)
          await whileOpen(reply.raw, (signal) => sleep(waitMs, undefined, { signal }).catch(() => {}));
        return { entries: [], next: since, oldest: 0 };
      }
      const tenantId = tenantScope(req.principal);
      const query = (after: number): SgLogQuery => ({
        since: after,
        limit,
        ...(endpoint === undefined ? {} : { endpointId: endpoint }),
        ...(tenantId === undefined ? {} : { tenantId }),
        ...(verdict === undefined ? {} : { verdict }),
      });
      // One past the newest came from before the numbering began again (a restart on the
      // embedded store, a Redis that lost its data). Kept, it would hide every entry until the
      // log counted that far; read from the oldest kept instead.
      let page = book.list(query(since > book.last ? 0 : since));
      if (page.entries.length === 0 && waitMs > 0)
        page = await whileOpen(reply.raw, (signal) => waitForEntries(book, page, query, waitMs, signal));
      req.log.debug({ since, entries: page.entries.length, next: page.next }, 'security group log read');
      return page;
    },
  );
};

/**
 * Waits for entries after `page.next` that the query lets through, until `waitMs` is up or
 * `signal` aborts. An entry the filters drop moves `next` on and the wait goes on.
 */
async function waitForEntries(
  book: SgLogBook,
  empty: SgLogPage,
  query: (after: number) => SgLogQuery,
  waitMs: number,
  signal: AbortSignal,
): Promise<SgLogPage> {
  const deadline = Date.now() + waitMs;
  let page = empty;
  while (page.entries.length === 0 && (await book.waitAfter(page.next, deadline - Date.now(), signal)))
    page = book.list(query(page.next));
  return page;
}
