import { describe, expect, it } from 'vitest';
import { checkQos, qosColumn, qosText } from '../../northbound/cli/qos-flags.js';
import { cliHarness } from './cli-harness.js';

/** `weft endpoint create|update` rate-limit flags, and the limits in show and list. */
const cli = cliHarness();
const { weft, json } = cli;

describe('weft endpoint: rate limits', () => {
  it('makes the qos object from the flags; the API fills in a burst left out', async () => {
    const ep = await json(
      'endpoint create --id q1 --network n1 --egress-kbps 10000 --ingress-kbps 5000 --ingress-burst-kb 4000',
    );
    expect(ep.qos).toEqual({
      egress: { kbps: 10_000, burstKb: 8_000 },
      ingress: { kbps: 5_000, burstKb: 4_000 },
    });
  });

  it('shows the limits with their units, and lists the rates in a QOS column', async () => {
    const shown = await weft('endpoint show q1');
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(
      /^qos:\s+egress 10000 kbit\/s \(burst 8000 kbit\), ingress 5000 kbit\/s \(burst 4000 kbit\)$/m,
    );
    expect((await weft('endpoint create --id q0 --network n1')).code).toBe(0);
    const list = await weft('endpoint list --network n1');
    expect(list.out.split('\n')[0]).toMatch(/^ID\s+NETWORK\s+MAC\s+IPS\s+IFACE-ID\s+BOUND\s+QOS\s+REV$/);
    expect(list.out).toMatch(/^q1\s+.*\s+no\s+egress 10000 kbit\/s, ingress 5000 kbit\/s\s+\d+$/m);
    expect(list.out).toMatch(/^q0\s+.*\s+no\s+-\s+\d+$/m);
    // Without limits, show has no qos line at all.
    expect((await weft('endpoint show q0')).out).not.toMatch(/^qos:/m);
  });

  it('update changes the direction given and keeps the other; --no-qos removes them', async () => {
    // q1 has both limits (created above): the egress one changes, the ingress one stays.
    const one = await json('endpoint update q1 --egress-kbps 20000 --egress-burst-kb 1000');
    expect(one.qos).toEqual({
      egress: { kbps: 20_000, burstKb: 1_000 },
      ingress: { kbps: 5_000, burstKb: 4_000 },
    });
    const both = await json('endpoint update q1 --ingress-kbps 3000');
    expect(both.qos).toEqual({
      egress: { kbps: 20_000, burstKb: 1_000 },
      ingress: { kbps: 3_000, burstKb: 2_400 },
    });
    // A qos given whole in --data is the API's: it replaces.
    const egressOnly = { egress: { kbps: 20_000, burstKb: 1_000 } };
    const replaced = await json(`endpoint update q1 --data '{"qos":${JSON.stringify(egressOnly)}}'`);
    expect(replaced.qos).toEqual(egressOnly);
    const renamed = await json('endpoint update q1 --name web');
    expect(renamed.qos).toEqual(egressOnly);
    // A stale If-Match still wins over the read: the change is refused, not merged over.
    const stale = await weft(`endpoint update q1 --ingress-kbps 100 --if-match ${replaced.revision}`);
    expect(stale.code).toBe(1);
    expect(stale.err).toMatch(/412|precondition/i);
    // --no-qos wins over a qos in --data: the flag replaces it, nothing of --data's kept.
    const data = await json(`endpoint update q1 --data '{"qos":${JSON.stringify(egressOnly)}}' --no-qos`);
    expect(data.qos).toBeUndefined();
    await json(`endpoint update q1 --data '{"qos":${JSON.stringify(egressOnly)}}'`);
    const cleared = await json('endpoint update q1 --no-qos');
    expect(cleared.qos).toBeUndefined();
    expect(cleared.name).toBe('web');
  });

  it('adds the flags to what --data gives, member by member', async () => {
    const ep = await json(
      `endpoint create --id q2 --network n1 --data '{"qos":{"egress":{"kbps":3000}}}' --egress-burst-kb 500 --ingress-kbps 64`,
    );
    expect(ep.qos).toEqual({ egress: { kbps: 3_000, burstKb: 500 }, ingress: { kbps: 64, burstKb: 52 } });
  });

  it('exits 2 naming the flag: a burst without its rate, a value that is not an integer, --no-qos with a limit', async () => {
    const burst = await weft('endpoint update q2 --ingress-burst-kb 100');
    expect(burst.code).toBe(2);
    expect(burst.err).toContain('--ingress-burst-kb needs --ingress-kbps');
    const unit = await weft('endpoint create --network n1 --egress-kbps 10M');
    expect(unit.code).toBe(2);
    expect(unit.err).toContain("--egress-kbps must be an integer, got '10M'");
    const fraction = await weft('endpoint create --network n1 --ingress-kbps 100 --ingress-burst-kb 1.5');
    expect(fraction.code).toBe(2);
    expect(fraction.err).toContain("--ingress-burst-kb must be an integer, got '1.5'");
    const both = await weft('endpoint update q2 --no-qos --egress-kbps 100');
    expect(both.code).toBe(2);
    expect(both.err).toContain('--no-qos removes every limit: it cannot be given with --egress-kbps');
    // Nothing was sent: q2 keeps its limits.
    expect((await json('endpoint show q2')).qos.ingress).toEqual({ kbps: 64, burstKb: 52 });
  });

  it("passes the API's range check through (exit 1, naming the field)", async () => {
    const slow = await weft('endpoint create --network n1 --egress-kbps 4');
    expect(slow.code).toBe(1);
    expect(slow.err).toMatch(/qos.*egress.*kbps.*>= 8.*HTTP 400 invalid/);
  });

  it('lists the flags in the help', async () => {
    const help = await weft('endpoint --help');
    for (const flag of ['egress-kbps', 'egress-burst-kb', 'ingress-kbps', 'ingress-burst-kb'])
      expect(help.out).toMatch(new RegExp(`^  --${flag} VALUE\\s+\\S`, 'm'));
    expect(help.out).toMatch(/^ {2}--dscp VALUE\s+mark every IP packet the VM sends with DSCP N/m);
    expect(help.out).toMatch(/^ {2}--no-qos\s+no rate limits and no marking \(update: removes them\)$/m);
  });
});

describe('weft endpoint: DSCP marking', () => {
  it('marks with --dscp, keeps limits and marking across updates of the other, shows and lists it', async () => {
    const ep = await json('endpoint create --id d1 --network n1 --dscp 46');
    expect(ep.qos).toEqual({ dscp: 46 });
    const limited = await json('endpoint update d1 --egress-kbps 1000');
    expect(limited.qos).toEqual({ dscp: 46, egress: { kbps: 1_000, burstKb: 800 } });
    const remarked = await json('endpoint update d1 --dscp 0');
    expect(remarked.qos).toEqual({ dscp: 0, egress: { kbps: 1_000, burstKb: 800 } });
    expect((await weft('endpoint show d1')).out).toMatch(
      /^qos:\s+egress 1000 kbit\/s \(burst 800 kbit\), dscp 0$/m,
    );
    expect((await weft('endpoint list --network n1')).out).toMatch(
      /^d1\s+.*\s+egress 1000 kbit\/s, dscp 0\s+\d+$/m,
    );
    expect((await json('endpoint update d1 --no-qos')).qos).toBeUndefined();
  });

  it('refuses a DSCP out of range (API, exit 1) or not whole (exit 2), or with --no-qos; nothing sent', async () => {
    await json('endpoint update d1 --dscp 18');
    const big = await weft('endpoint update d1 --dscp 64');
    expect(big.code).toBe(1);
    expect(big.err).toMatch(/qos.*dscp.*<= 63.*HTTP 400 invalid/);
    const word = await weft('endpoint update d1 --dscp EF');
    expect(word.code).toBe(2);
    expect(word.err).toContain("--dscp must be an integer, got 'EF'");
    const both = await weft('endpoint update d1 --no-qos --dscp 10');
    expect(both.code).toBe(2);
    expect(both.err).toContain('cannot be given with --dscp');
    expect((await json('endpoint show d1')).qos).toEqual({ dscp: 18 });
  });
});

describe('qos flag helpers', () => {
  it('checkQos: a burst needs its rate in the body (from a flag or --data)', () => {
    const given = new Set(['egress-burst-kb']);
    expect(() => checkQos({ qos: { egress: { burstKb: 10 } } }, given)).toThrow(
      /--egress-burst-kb needs --egress-kbps/,
    );
    expect(() => checkQos({ qos: { egress: { kbps: 100, burstKb: 10 } } }, given)).not.toThrow();
    expect(() => checkQos({ qos: {} }, new Set(['no-qos']))).not.toThrow();
    expect(() => checkQos({ qos: {} }, new Set(['no-qos', 'ingress-burst-kb']))).toThrow(
      /cannot be given with --ingress-burst-kb/,
    );
  });

  it('qosText and the QOS column: directions in order, burst only where known', () => {
    expect(qosText({ ingress: { kbps: 8, burstKb: 16 }, egress: { kbps: 100 } })).toBe(
      'egress 100 kbit/s, ingress 8 kbit/s (burst 16 kbit)',
    );
    expect(qosText({})).toBe('none');
    expect(qosText({ dscp: 0 })).toBe('dscp 0');
    expect(qosColumn.value({ qos: { dscp: 46, egress: { kbps: 64 } } })).toBe('egress 64 kbit/s, dscp 46');
    expect(qosColumn.value({ qos: { ingress: { kbps: 8, burstKb: 16 } } })).toBe('ingress 8 kbit/s');
    expect(qosColumn.value({})).toBe('-');
  });
});
