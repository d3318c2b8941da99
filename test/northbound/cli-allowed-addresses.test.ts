import { describe, expect, it } from 'vitest';
import { cliHarness } from './cli-harness.js';

/** `weft endpoint create|update --allowed-address`: the list sent, replaced, cleared; shown. */
const cli = cliHarness();
const { weft, json } = cli;

describe('weft endpoint: allowed addresses', () => {
  it('create sends every --allowed-address (repeated or comma-separated), normalised by the API', async () => {
    const ep = await json(
      'endpoint create --id a1 --network n1 --ip 10.0.0.5 --allowed-address 10.0.0.100/32 --allowed-address 10.1.0.0/16,2001:db8::/64',
    );
    expect(ep.allowedAddresses).toEqual(['10.0.0.100', '10.1.0.0/16', '2001:db8::/64']);
    expect(cli.h.intents.get('endpoint', 'a1').allowedAddresses).toEqual([
      '10.0.0.100',
      '10.1.0.0/16',
      '2001:db8::/64',
    ]);
  });

  it('show prints them on one line; an endpoint without any has no such line', async () => {
    const shown = await weft('endpoint show a1');
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(/^allowedAddresses:\s+10\.0\.0\.100,10\.1\.0\.0\/16,2001:db8::\/64$/m);
    expect((await weft('endpoint create --id a0 --network n1')).code).toBe(0);
    expect((await weft('endpoint show a0')).out).not.toMatch(/^allowedAddresses:/m);
  });

  it("update replaces the list, keeps it when not given, and '' clears it", async () => {
    const replaced = await json('endpoint update a1 --allowed-address 10.0.0.101');
    expect(replaced.allowedAddresses).toEqual(['10.0.0.101']);
    const renamed = await json('endpoint update a1 --name web');
    expect(renamed.allowedAddresses).toEqual(['10.0.0.101']);
    const cleared = await json("endpoint update a1 --allowed-address ''");
    expect(cleared.allowedAddresses).toBeUndefined();
    expect(cleared.name).toBe('web');
    expect('allowedAddresses' in cli.h.intents.get('endpoint', 'a1')).toBe(false);
  });

  it("passes the API's refusal through (exit 1, naming the entry); nothing is stored", async () => {
    const revision = cli.h.intents.get('endpoint', 'a1').revision;
    const bad = await weft('endpoint update a1 --allowed-address 10.0.0.100 --allowed-address 10.0.0.5/24');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("allowedAddresses[1]: '10.0.0.5/24' has host bits set (10.0.0.0/24?)");
    expect(bad.err).toMatch(/HTTP 400 invalid/);
    const taken = await weft('endpoint create --network n1 --allowed-address 10.0.0.5');
    expect(taken.code).toBe(1);
    expect(taken.err).toContain("10.0.0.5 is an address of another endpoint of network 'n1' ('a1')");
    expect(taken.err).toMatch(/HTTP 409 conflict/);
    expect(cli.h.intents.get('endpoint', 'a1').revision).toBe(revision);
    expect(cli.h.intents.list('endpoint').items.map((e) => e.id)).toEqual(['a0', 'a1']);
  });

  it('lists the flag in the help', async () => {
    const help = await weft('endpoint --help');
    expect(help.out).toMatch(/^ {2}--allowed-address VALUE\s+extra source address or CIDR \(a VIP\)/m);
  });
});
