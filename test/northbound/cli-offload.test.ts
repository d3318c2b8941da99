import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyStatus, type OffloadStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

const report: OffloadStatus = {
  chassisId: 'hv1',
  profile: 'asap2',
  totalFlows: 40,
  softwareFlows: 12,
  softwareShare: 0.3,
  reasons: { 'ARP field rewrites are done in software': 10, 'conntrack stays in software here': 2 },
  examples: [{ flow: 't30 p100 arp,arp_tpa=10.0.0.1', reasons: ['ARP field rewrites are done in software'] }],
};

let h: Harness;
let env: Record<string, string>;
beforeAll(async () => {
  h = await startHarness({
    statusProvider: { ...emptyStatus, offload: (id) => (id === 'hv1' ? report : undefined) },
  });
  env = { WEFT_API: await h.app.listen({ host: '127.0.0.1', port: 0 }), WEFT_TOKEN: ADMIN };
  await h.intents.put('chassis', 'hv1', { name: 'hv1', tunnelIp: '192.168.90.1', offload: 'asap2' });
});
afterAll(async () => {
  await h.close();
});

describe('weft chassis offload', () => {
  it('prints the share in software, the reasons by count and examples', async () => {
    const r = await runWeft('chassis offload hv1', env);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('chassis hv1 (profile asap2): 12 of 40 flows would stay in software (30.0%)');
    expect(lines).toContain('      10  ARP field rewrites are done in software');
    expect(r.out.indexOf('      10  ARP')).toBeLessThan(r.out.indexOf('       2  conntrack'));
    expect(r.out).toContain('  t30 p100 arp,arp_tpa=10.0.0.1\n      ARP field rewrites are done in software');
  });

  it('prints the API answer with --json', async () => {
    const r = await runWeft('chassis offload hv1 --json', env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual(report);
  });

  it('names what is wrong: no ID, an unknown chassis, an unknown action', async () => {
    const noId = await runWeft('chassis offload', env);
    expect(noId.code).toBe(2);
    expect(noId.err).toMatch(/offload needs the chassis ID/);
    const unknown = await runWeft('chassis offload nope', env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/chassis 'nope' not found/);
    const bad = await runWeft('chassis frobnicate hv1', env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/unknown action 'frobnicate'/);
    const help = await runWeft('chassis --help', env);
    expect(help.out).toMatch(/weft chassis offload ID\s+which of its flows ASAP2/);
  });
});
