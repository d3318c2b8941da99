import { afterEach, describe, expect, it } from 'vitest';
import { emptyStatus, type OffloadStatus } from '../../northbound/status.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const report: OffloadStatus = {
  chassisId: 'hv1',
  profile: 'asap2',
  totalFlows: 10,
  softwareFlows: 2,
  softwareShare: 0.2,
  reasons: { 'conntrack is offloaded only with ct offload enabled': 2 },
  examples: [{ flow: 't56 p100 ...', reasons: ['conntrack is offloaded only with ct offload enabled'] }],
};

describe('GET /v1/chassis/:id/offload', () => {
  it("answers the chassis's offload check, admin only", async () => {
    const asked: string[] = [];
    h = await startHarness({
      statusProvider: {
        ...emptyStatus,
        offload: (id) => {
          asked.push(id);
          return id === 'hv1' ? report : undefined;
        },
      },
    });
    await h.intents.put('chassis', 'hv1', { name: 'hv1', tunnelIp: '192.168.80.1', offload: 'asap2' });
    const res = await h.app.inject({ url: '/v1/chassis/hv1/offload', headers: h.admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(report);
    expect(asked).toEqual(['hv1']);
    const tenant = await h.tenantAuth('t1');
    const denied = await h.app.inject({ url: '/v1/chassis/hv1/offload', headers: tenant });
    expect(denied.statusCode).toBe(403);
    expect((await h.app.inject({ url: '/v1/chassis/hv1/offload' })).statusCode).toBe(401);
  });

  it('names an unknown chassis, and one whose desired state is not computed yet, with 404', async () => {
    h = await startHarness({ statusProvider: { ...emptyStatus, offload: () => undefined } });
    const unknown = await h.app.inject({ url: '/v1/chassis/nope/offload', headers: h.admin });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toMatch(/chassis 'nope' not found/);
    await h.intents.put('chassis', 'hv2', { name: 'hv2', tunnelIp: '192.168.80.2' });
    const early = await h.app.inject({ url: '/v1/chassis/hv2/offload', headers: h.admin });
    expect(early.statusCode).toBe(404);
    expect(early.json().error.message).toMatch(/chassis 'hv2' has no desired state yet/);
  });
});
