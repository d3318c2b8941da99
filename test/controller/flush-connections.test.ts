import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type FactsSource } from '../../controller/engine/engine.js';
import { NotLeaderError } from '../../controller/ha/fenced-port.js';
import { IntentError } from '../../controller/intent/errors.js';
import type { IntentService } from '../../controller/intent/service.js';
import { statusProvider } from '../../controller/status-provider.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import { fakeSources } from './engine/fake-sources.js';
import { MemorySwitch } from './engine/memory-switch.js';
import { redBlueEachTest } from './intent/router-fixture.js';

/**
 * An endpoint's connections forgotten on request (DELETE /v1/endpoints/{id}/connections): the
 * engine flushes its zone (its ofport) on the switches of its hypervisor, and only there; the
 * provider names what stops it. Real OVS: test/e2e/stateful.int.test.ts.
 */
const log = pino({ level: 'silent' });

/** A switch that records the zones it was told to flush, or refuses with `refuse`. */
class FlushingSwitch extends MemorySwitch {
  zones: number[][] = [];
  refuse?: Error;
  async flushConntrackZones(zones: readonly number[]): Promise<void> {
    if (this.refuse) throw this.refuse;
    this.zones.push([...zones]);
  }
}

let svc: IntentService;
redBlueEachTest(
  (s) => {
    svc = s;
  },
  async (s) => {
    await s.put('endpoint', 'web1', { networkId: 'web', ips: ['10.0.0.5'], ifaceId: 'tap-web1' });
    await s.put('endpoint', 'web2', { networkId: 'web', ips: ['10.0.0.6'], ifaceId: 'tap-web2' });
  },
);

describe('flushing an endpoint’s connections', () => {
  let engine: Engine | undefined;
  afterEach(() => engine?.close());

  function setUp() {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, log);
    const [hv1, hv2, hv1b] = ['00000000000000a1', '00000000000000a2', '00000000000000b1'].map(
      (dpid) => new FlushingSwitch(dpid),
    );
    factSrc.bind(hv1!.dpid, 'hv1');
    factSrc.bind(hv2!.dpid, 'hv2');
    for (const sw of [hv1!, hv2!]) engine.attach(sw);
    // web1 is bound on hv1 at ofport 9 (zone 9); web2 is not bound anywhere.
    const facts = {
      current: () => ({
        bindings: new Map([['tap-web1', { chassisId: 'hv1', ofport: 9 }]]),
        ports: new Map(),
      }),
    } as unknown as FactsSource;
    const status = statusProvider(engine, { list: () => [] } as unknown as SwitchRegistry, facts, svc);
    return { factSrc, status, hv1: hv1!, hv2: hv2!, hv1b: hv1b! };
  }

  it('flushes its zone on every switch of its hypervisor, and on no other', async () => {
    const { factSrc, status, hv1, hv2, hv1b } = setUp();
    expect(await status.flushConnections!('web1')).toEqual({
      endpointId: 'web1',
      chassis: 'hv1',
      zone: 9,
      datapathIds: ['00000000000000a1'],
    });
    expect(hv1.zones).toEqual([[9]]);
    expect(hv2.zones).toEqual([]);
    // A second bridge of hv1 connected: both flush (zones are the datapath's, either may hold them).
    factSrc.bind(hv1b.dpid, 'hv1');
    engine!.attach(hv1b);
    expect((await status.flushConnections!('web1')).datapathIds).toEqual([
      '00000000000000a1',
      '00000000000000b1',
    ]);
    expect([hv1.zones, hv1b.zones, hv2.zones]).toEqual([[[9], [9]], [[9]], []]);
  });

  it('names what stops it: unknown, not bound, no switch of its hypervisor, a switch refusing', async () => {
    const { status, hv1 } = setUp();
    await expect(status.flushConnections!('nope')).rejects.toMatchObject({ code: 'not_found' });
    await expect(status.flushConnections!('web2')).rejects.toMatchObject({
      code: 'conflict',
      message:
        "endpoint 'web2' is not bound: no hypervisor has a VM port with iface-id 'tap-web2', so it has no connections",
    });
    hv1.refuse = new NotLeaderError(hv1.dpid);
    const refused = await status.flushConnections!('web1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IntentError);
    expect(refused).toMatchObject({ code: 'unavailable' });
    expect((refused as Error).message).toMatch(/^hypervisor hv1 did not flush zone 9: /);
    engine!.detach(hv1.dpid);
    await expect(status.flushConnections!('web1')).rejects.toMatchObject({
      code: 'unavailable',
      message: 'hypervisor hv1 has no switch connected to this controller: its connections are kept',
    });
    expect(hv1.zones).toEqual([]);
  });
});
