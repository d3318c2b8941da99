import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../controller/cli/weft.js';
import { SgLogBook } from '../../controller/sg-log/sg-log-book.js';
import { entryLine, flowText } from '../../northbound/cli/sg-log-command.js';
import { memoryIo } from '../cli/memory-io.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { sampleEntry } from './sg-log-entry.js';

let h: Harness;
let api: string;
let book: SgLogBook;
/** The URLs the API was asked, from its request log lines: what the CLI put in the query. */
let asked: string[] = [];
beforeAll(async () => {
  book = new SgLogBook(3000);
  const logger = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        const o = JSON.parse(line) as { msg: string; url?: string };
        if (o.msg === 'request' && o.url?.startsWith('/v1/security-group-log')) asked.push(o.url);
      },
    },
  );
  h = await startHarness({ securityLog: book, logger });
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => h.close());
beforeEach(() => {
  asked = [];
});

const weft = async (argv: string[], token = ADMIN, signal?: AbortSignal) => {
  const io = { ...memoryIo({ WEFT_API: api, WEFT_TOKEN: token }), ...(signal ? { signal } : {}) };
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
};

const entry = sampleEntry;
const queryOf = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);

describe('the line of one entry', () => {
  it('shows time, verdict, direction, chassis, endpoint, protocol and addresses with ports', () => {
    expect(entryLine({ seq: 1, ...entry() })).toBe(
      '2026-12-04T17:03:11.201Z  denied    ingress  hv2  blue2  tcp 10.0.0.1:43512 -> 10.0.0.2:9090',
    );
    expect(
      entryLine({ seq: 2, ...entry({ verdict: 'accepted', direction: 'egress', protocol: 'udp' }) }),
    ).toBe('2026-12-04T17:03:11.201Z  accepted  egress   hv2  blue2  udp 10.0.0.1:43512 -> 10.0.0.2:9090');
  });

  it('names the group and rule that admitted an accepted connection', () => {
    expect(
      entryLine({ seq: 3, ...entry({ verdict: 'accepted', securityGroupId: 'web', ruleId: 'r1' }) }),
    ).toBe(
      '2026-12-04T17:03:11.201Z  accepted  ingress  hv2  blue2  tcp 10.0.0.1:43512 -> 10.0.0.2:9090  by web/r1',
    );
  });

  it('names the network ACL that logged an entry', () => {
    expect(entryLine({ seq: 4, ...entry({ networkAclId: 'no-9090' }) })).toBe(
      '2026-12-04T17:03:11.201Z  denied    ingress  hv2  blue2  tcp 10.0.0.1:43512 -> 10.0.0.2:9090  by acl no-9090',
    );
  });

  it('shows the type and code of icmp, brackets an IPv6 address with a port, numbers another protocol', () => {
    const icmp = entry({
      protocol: 'icmp',
      srcPort: undefined,
      dstPort: undefined,
      icmpType: 8,
      icmpCode: 0,
    });
    expect(flowText({ seq: 1, ...icmp })).toBe('icmp 10.0.0.1 -> 10.0.0.2 type 8 code 0');
    const v6 = entry({ src: 'fd00::1', dst: 'fd00::2', dstPort: 443 });
    expect(flowText({ seq: 1, ...v6 })).toBe('tcp [fd00::1]:43512 -> [fd00::2]:443');
    const gre = entry({ protocol: '47', srcPort: undefined, dstPort: undefined });
    expect(flowText({ seq: 1, ...gre })).toBe('proto 47 10.0.0.1 -> 10.0.0.2');
  });
});

describe('weft sg-log', () => {
  it('is listed in weft --help and has its own help', async () => {
    expect((await weft(['--help'])).out).toMatch(/\n {2}sg-log\s+what logging security groups/);
    const help = await weft(['sg-log', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: weft sg-log \[options\]/);
  });

  it('says so when nothing was logged', async () => {
    const r = await weft(['sg-log']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^no security group log entries \(a group logs with --log/);
  });

  it('prints the last --limit entries (paging through the log), or those after --since', async () => {
    for (let i = 1; i <= 2500; i++) book.add(entry({ srcPort: i }));
    const last = await weft(['sg-log', '--limit', '3']);
    expect(last.code, last.err).toBe(0);
    expect(
      last.out
        .trimEnd()
        .split('\n')
        .map((l) => l.match(/:(\d+) ->/)![1]),
    ).toEqual(['2498', '2499', '2500']);
    // The request log line is written as the answer goes out: poll rather than race it.
    await expect.poll(() => asked.map((u) => queryOf(u).since)).toEqual(['0', '1000', '2000']); // 1000 a page
    const after = await weft(['sg-log', '--since', '10', '--limit', '2']);
    expect(after.out.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/:11 -> /),
      expect.stringMatching(/:12 -> /),
    ]);
    expect((await weft(['sg-log', '--since', '2500'])).out).toMatch(
      /^no security group log entries after 2500 /,
    );
  });

  it('passes --endpoint and --verdict to the API as its filters', async () => {
    book.add(entry({ endpointId: 'web1', verdict: 'accepted', srcPort: 1 }));
    book.add(entry({ endpointId: 'web1', verdict: 'denied', srcPort: 2 }));
    book.add(entry({ endpointId: 'db1', verdict: 'accepted', srcPort: 3 }));
    const r = await weft(['sg-log', '--endpoint', 'web1', '--verdict', 'accepted']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^\S+ {2}accepted {2}ingress {2}hv2 {2}web1 {2}tcp 10\.0\.0\.1:1 -> /);
    expect(r.out.trimEnd().split('\n')).toHaveLength(1);
    await expect.poll(() => asked.length).toBe(1);
    expect(queryOf(asked[0]!)).toMatchObject({ endpoint: 'web1', verdict: 'accepted', limit: '1000' });
  });

  it('--json prints the entries, one JSON object a line', async () => {
    const a = book.add(entry({ endpointId: 'j1' }));
    const b = book.add(entry({ endpointId: 'j1', protocol: 'icmp', icmpType: 3, icmpCode: 1 }));
    const r = await weft(['sg-log', '--endpoint', 'j1', '--json']);
    expect(
      r.out
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([a, b]);
    // Nothing at all (not even a "no entries" line) when there is none: the output stays JSON lines.
    expect((await weft(['sg-log', '--endpoint', 'nobody', '--json'])).out).toBe('');
  });

  it('--follow keeps printing entries as they come, and stops on the signal', async () => {
    const stop = new AbortController();
    const io = { ...memoryIo({ WEFT_API: api, WEFT_TOKEN: ADMIN }), signal: stop.signal };
    const running = main(['sg-log', '--endpoint', 'f1', '--follow'], io);
    book.add(entry({ endpointId: 'f1', srcPort: 1 }));
    await expect.poll(() => io.out(), { timeout: 5_000 }).toMatch(/f1 {2}tcp 10\.0\.0\.1:1 -> /);
    book.add(entry({ endpointId: 'f1', srcPort: 2 }));
    await expect.poll(() => io.out(), { timeout: 5_000 }).toMatch(/f1 {2}tcp 10\.0\.0\.1:2 -> /);
    expect(asked.at(-1)).toMatch(/wait=30s/);
    stop.abort();
    book.add(entry({ endpointId: 'f1', srcPort: 3 })); // ends the long poll in flight
    expect(await running).toBe(0);
    expect(io.out()).not.toMatch(/10\.0\.0\.1:3 -> /); // brought after the interrupt: not printed
    expect(io.out().trimEnd().split('\n')).toHaveLength(2);
  });

  it('shows a tenant token only its tenant', async () => {
    book.add(entry({ tenantId: 'tx', endpointId: 'tx-vm' }));
    book.add(entry({ tenantId: 'ty', endpointId: 'ty-vm' }));
    const token = (await h.tenantAuth('tx')).authorization.slice('Bearer '.length);
    const r = await weft(['sg-log', '--limit', '1000'], token);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/ {2}tx-vm {2}/);
    expect(r.out).not.toMatch(/ {2}(ty-vm|blue2) {2}/);
  });

  it("prints the API's refusal and exits 1", async () => {
    const r = await weft(['sg-log', '--endpoint', 'a/b']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^weft sg-log: query parameter 'endpoint' must match pattern .* \[endpoint\] \(HTTP 400 invalid\)\n$/,
    );
  });

  it.each([
    [['--verdict', 'dropped'], "--verdict must be accepted or denied, got 'dropped'"],
    [['--limit', '0'], "--limit must be a whole number from 1 to 1000 (got '0')"],
    [['--limit', '1001'], "--limit must be a whole number from 1 to 1000 (got '1001')"],
    [['--since=-1'], "--since must be a whole number from 0 to 9007199254740991 (got '-1')"],
    [['--since', 'x'], "--since must be a whole number from 0 to 9007199254740991 (got 'x')"],
    [['--endpoint='], '--endpoint needs an endpoint id'],
    [['--tenant', 't1'], "Unknown option '--tenant'"],
    [['vm1'], "Unexpected argument 'vm1'"],
  ])('refuses %j as a usage error (exit 2)', async (args, message) => {
    const r = await weft(['sg-log', ...args]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`weft sg-log: ${message}`);
    expect(r.err).toContain('Run `weft sg-log --help` for usage.');
  });
});
