import { describe, expect, it } from 'vitest';
import type { ChassisPorts } from '../../apps/build-view.js';
import type { Mirror } from '../../controller/intent/model.js';
import { type MirrorFacts, mirrorState } from '../../controller/mirror-status.js';

/** A mirror's status says whether copies are made, along which path, and otherwise why not. */
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
const m1: Mirror = {
  ...meta,
  id: 'm1',
  tenantId: 't1',
  source: 'web',
  destination: 'ids',
  direction: 'both',
  vni: 7000,
  enabled: true,
};

function facts(
  bound: Record<string, string>,
  opts: { asap2?: string[]; ports?: Record<string, ChassisPorts> } = {},
): MirrorFacts {
  return {
    chassisOf: (ep) => bound[ep],
    chassis: (id) => ({ offload: opts.asap2?.includes(id) ? 'asap2' : 'none' }),
    ports: (id) => opts.ports?.[id] ?? { tunnelPort: 100, byName: new Map() },
  };
}

describe('mirror status', () => {
  it('is active locally when both ends share a hypervisor, through the tunnel otherwise', () => {
    expect(mirrorState(m1, facts({ web: 'hv1', ids: 'hv1' }))).toEqual({
      active: true,
      sourceChassis: 'hv1',
      destinationChassis: 'hv1',
      path: 'local',
    });
    expect(mirrorState(m1, facts({ web: 'hv1', ids: 'hv2' }))).toEqual({
      active: true,
      sourceChassis: 'hv1',
      destinationChassis: 'hv2',
      path: 'tunnel',
    });
  });

  it('says why nothing is copied: disabled, an end not bound, no tunnel port', () => {
    expect(mirrorState({ ...m1, enabled: false }, facts({ web: 'hv1', ids: 'hv2' }))).toMatchObject({
      active: false,
      reason: 'disabled',
    });
    expect(mirrorState(m1, facts({ ids: 'hv2' }))).toEqual({
      active: false,
      destinationChassis: 'hv2',
      reason: "source 'web' is not bound on any hypervisor",
    });
    expect(mirrorState(m1, facts({ web: 'hv1' }))).toMatchObject({
      active: false,
      reason: "destination 'ids' is not bound on any hypervisor",
    });
    const noPort = facts({ web: 'hv1', ids: 'hv2' }, { ports: { hv2: { byName: new Map() } } });
    expect(mirrorState(m1, noPort)).toMatchObject({ active: false, reason: 'hv2 has no VXLAN port yet' });
  });

  it('asap2: waits for the fixed-key port of the mirror VNI on both hypervisors', () => {
    const ports = (vnis: number[]): ChassisPorts => ({
      vniTunnelPorts: new Map(vnis.map((v, i) => [v, 200 + i])),
      byName: new Map(),
    });
    const waiting = facts(
      { web: 'hv1', ids: 'hv2' },
      { asap2: ['hv1', 'hv2'], ports: { hv1: ports([7000]), hv2: ports([100]) } },
    );
    expect(mirrorState(m1, waiting)).toMatchObject({
      active: false,
      reason: 'hv2 has no fixed-key VXLAN port for VNI 7000 yet (asap2)',
    });
    const ready = facts(
      { web: 'hv1', ids: 'hv2' },
      { asap2: ['hv1', 'hv2'], ports: { hv1: ports([7000]), hv2: ports([100, 7000]) } },
    );
    expect(mirrorState(m1, ready)).toMatchObject({ active: true, path: 'tunnel' });
  });
});
